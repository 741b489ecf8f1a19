package dev.concertcache.api.capture;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.convert.DurationStyle;

/**
 * Change data capture from the database's binary log (ADR 0033): committed row changes of the concert and schedule
 * tables, by any application, invalidate every cache tier of every instance.
 *
 * @param mode Whether the service reads the binary log: {@code required} refuses to start when the server is not set
 * up for it, {@code optional} starts with a warning (changes by other applications then show after the caches'
 * TTLs), {@code off} does not read it (default off).
 * @param host Database host; by default the host of {@code spring.datasource.url}.
 * @param port Database port; by default the port of {@code spring.datasource.url}, else 3306.
 * @param username User with {@code REPLICATION SLAVE} and {@code BINLOG MONITOR} (MariaDB) or
 * {@code REPLICATION CLIENT} (MySQL); by default {@code spring.datasource.username}.
 * @param password Password of {@code username}; by default {@code spring.datasource.password}.
 * @param serverId Replication client id, distinct from the server's and every other replica's {@code server_id}; by
 * default a random one in a high range, chosen per instance at start.
 * @param connectTimeout Longest wait for the database to accept the replication connection (default 5s).
 * @param sslMode TLS on the capture's connections, the binary log's and the check's (default disable).
 * @param maxKeysPerTransaction Above this many keys of one cache in one transaction, that whole cache is invalidated
 * instead (one generation move rather than thousands of tombstones) (default 1000).
 * @param retryInterval Wait before an invalidation (or a position) that Redis did not take is first sent again, on
 * the same binlog connection: a killed Redis connection costs a retry, not a reconnect and a replay. Also how often
 * the landing thread looks for retries due (default 25ms).
 * @param maxRetryInterval The longest wait before an invalidation Redis refused again and again is sent once more;
 * each refusal doubles the wait from {@code retry-interval} up to this. Once the node is back, a refused
 * invalidation that holds the confirmations back lands within it; until then instances past
 * {@code progress.max-lag} read from the database (default 250ms).
 * @param lease The Redis lease that makes one instance of the fleet the reader of the binary log.
 * @param reconnect Waits between attempts after the stream broke.
 * @param tables The tables whose row changes invalidate caches, and their key columns.
 * @param progress How the reader confirms what it has invalidated, and how old a confirmation every instance
 * accepts.
 */
@ConfigurationProperties("concert-cache.capture")
public record CaptureProperties(@DefaultValue("off") Mode mode, @Nullable String host, @Nullable Integer port,
		@Nullable String username, @Nullable String password, @Nullable Long serverId,
		@DefaultValue("5s") Duration connectTimeout, @DefaultValue("disable") SslMode sslMode,
		@DefaultValue("1000") int maxKeysPerTransaction, @DefaultValue("25ms") Duration retryInterval,
		@DefaultValue("250ms") Duration maxRetryInterval, @DefaultValue Lease lease, @DefaultValue Reconnect reconnect,
		@DefaultValue Tables tables, @DefaultValue Progress progress) {

	/**
	 * Default of {@code concert-cache.capture.progress.max-lag} and {@code progress.causal-read-wait}, as
	 * {@link DefaultValue} takes it. The one declaration of that default: {@link #DEFAULT_MAX_LAG} is parsed from it.
	 */
	static final String DEFAULT_MAX_LAG_VALUE = "200ms";

	/**
	 * Default of {@code concert-cache.capture.progress.max-lag}: how late a change may show whatever stalls. Read
	 * outside this class (tests wait for a confirmation younger than half of it), so kept, parsed from
	 * {@link #DEFAULT_MAX_LAG_VALUE} rather than declared a second time.
	 */
	public static final Duration DEFAULT_MAX_LAG = DurationStyle.detectAndParse(DEFAULT_MAX_LAG_VALUE);

	/** How strictly the service depends on reading the binary log. */
	public enum Mode {

		/** The service does not start unless the server and the grants allow capture. */
		REQUIRED,

		/** Capture when possible; otherwise start, warn, and rely on the caches' TTLs. */
		OPTIONAL,

		/** No capture. */
		OFF

	}

	/**
	 * The Redis lease that makes one instance of the fleet the reader of the binary log.
	 *
	 * @param ttl How long the lease outlives its holder's last renewal (renewed, and tried by standbys, every third of
	 * it): a dead reader delays the takeover by up to 4/3 of it. A reader that cannot renew reads on, so a short lease
	 * costs at most a second reader for a while, never a gap. The default keeps a change committed just before the
	 * reader died within the freshness contract's second (default 500ms).
	 */
	public record Lease(@DefaultValue("500ms") Duration ttl) {
	}

	/**
	 * The reader's confirmations (ADR 0039): every interval it reads the server's binary log position and, once it
	 * has invalidated every change up to a position read earlier, tells every instance how long ago that was.
	 *
	 * @param interval How often the reader reads the server's position and confirms what it has invalidated. The
	 * confirmation an instance last heard is two to three intervals old (ADR 0039), which at the default leaves over
	 * 100 ms of {@code max-lag} for a slow probe or landing (default 25ms).
	 * @param maxLag In mode {@code required}, how old the last confirmation may be before an instance reads past both
	 * cache tiers from the database: a stalled, lagging or missing reader then costs database reads, never a value
	 * older than this; so it is how late a change may show whatever stalls (default 200ms).
	 * @param causalReadWait How long a read that carries a commit position (a causal read, ADR 0038) waits for this
	 * instance to hear the reader confirm that position; past it, the read goes to the database. As long as
	 * {@code max-lag} by default: an instance past it reads from the database anyway (default 200ms).
	 */
	public record Progress(@DefaultValue("25ms") Duration interval,
			@DefaultValue(DEFAULT_MAX_LAG_VALUE) Duration maxLag,
			@DefaultValue(DEFAULT_MAX_LAG_VALUE) Duration causalReadWait) {
	}

	/**
	 * Waits between attempts after the stream broke (doubling from the initial to the maximum).
	 *
	 * @param initialBackoff First wait after a failure; a killed database is found within it (default 50ms).
	 * @param maxBackoff Longest wait between two attempts: until the reader reads again every instance reads past
	 * both tiers, so a database that is back waits at most this long for it; one login attempt from one reader every
	 * half second costs a database nothing (default 500ms).
	 */
	public record Reconnect(@DefaultValue("50ms") Duration initialBackoff, @DefaultValue("500ms") Duration maxBackoff) {
	}

	/**
	 * The tables whose row changes invalidate caches, and their key columns.
	 *
	 * @param schema Schema of both tables; by default the database of {@code spring.datasource.url}.
	 * @param concert Table of concerts (default concert).
	 * @param concertId Key column of {@code concert}: the id the {@code concert} and {@code schedules} caches use
	 * (default id).
	 * @param schedule Table of schedules (start times and seat counts) (default schedule).
	 * @param scheduleConcertId Column of {@code schedule} holding the concert's id: the key of the {@code schedules}
	 * cache (default concert_id).
	 */
	public record Tables(@Nullable String schema, @DefaultValue("concert") String concert,
			@DefaultValue("id") String concertId, @DefaultValue("schedule") String schedule,
			@DefaultValue("concert_id") String scheduleConcertId) {
	}

}
