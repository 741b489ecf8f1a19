package dev.concertcache.api.capture;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Change data capture from the database's binary log (ADR 0033): committed row changes of the concert and schedule
 * tables, by any application, invalidate every cache tier of every instance.
 */
@ConfigurationProperties("concert-cache.capture")
public class CaptureProperties {

	/**
	 * Default of {@code concert-cache.capture.lease.ttl}: a standby takes over from a dead reader within about 4/3
	 * of it, which keeps a change committed just before the reader died within the freshness contract's second.
	 */
	public static final Duration DEFAULT_LEASE_TTL = Duration.ofMillis(500);

	/** Default of {@code concert-cache.capture.reconnect.initial-backoff}: a killed database is found within it. */
	public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(50);

	/**
	 * Default of {@code concert-cache.capture.reconnect.max-backoff}: until the reader reads again every instance
	 * reads past both tiers, so a database that is back waits at most this long for it; one login attempt from one
	 * reader every half second costs a database nothing.
	 */
	public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofMillis(500);

	/** Default of {@code concert-cache.capture.retry-interval}. */
	public static final Duration DEFAULT_RETRY_INTERVAL = Duration.ofMillis(25);

	/** Default of {@code concert-cache.capture.max-retry-interval}. */
	public static final Duration DEFAULT_MAX_RETRY_INTERVAL = Duration.ofMillis(250);

	/** Default of {@code concert-cache.capture.connect-timeout}. */
	public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);

	/**
	 * Default of {@code concert-cache.capture.progress.interval}: the confirmation an instance last heard is two to
	 * three intervals old (ADR 0039), which leaves over 100 ms of {@code max-lag} for a slow probe or landing.
	 */
	public static final Duration DEFAULT_PROGRESS_INTERVAL = Duration.ofMillis(25);

	/** Default of {@code concert-cache.capture.progress.max-lag}: how late a change may show whatever stalls. */
	public static final Duration DEFAULT_MAX_LAG = Duration.ofMillis(200);

	/** Default of {@code concert-cache.capture.max-keys-per-transaction}. */
	public static final int DEFAULT_MAX_KEYS_PER_TRANSACTION = 1000;

	/**
	 * Whether the service reads the binary log: {@code required} refuses to start when the server is not set up for
	 * it, {@code optional} starts with a warning (changes by other applications then show after the caches'
	 * TTLs), {@code off} does not read it.
	 */
	private Mode mode = Mode.OFF;

	/** Database host; by default the host of {@code spring.datasource.url}. */
	private String host;

	/** Database port; by default the port of {@code spring.datasource.url}, else 3306. */
	private Integer port;

	/**
	 * User with {@code REPLICATION SLAVE} and {@code BINLOG MONITOR} (MariaDB) or {@code REPLICATION CLIENT}
	 * (MySQL); by default {@code spring.datasource.username}.
	 */
	private String username;

	/** Password of {@link #username}; by default {@code spring.datasource.password}. */
	private String password;

	/**
	 * Replication client id, distinct from the server's and every other replica's {@code server_id}; by default a
	 * random one in a high range, chosen per instance at start.
	 */
	private Long serverId;

	/** Longest wait for the database to accept the replication connection. */
	private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;

	/** TLS on the capture's connections, the binary log's and the check's. */
	private SslMode sslMode = SslMode.DISABLE;

	/**
	 * Above this many keys of one cache in one transaction, that whole cache is invalidated instead (one
	 * generation move rather than thousands of tombstones).
	 */
	private int maxKeysPerTransaction = DEFAULT_MAX_KEYS_PER_TRANSACTION;

	/**
	 * Wait before an invalidation (or a position) that Redis did not take is first sent again, on the same binlog
	 * connection: a killed Redis connection costs a retry, not a reconnect and a replay. Also how often the
	 * landing thread looks for retries due.
	 */
	private Duration retryInterval = DEFAULT_RETRY_INTERVAL;

	/**
	 * The longest wait before an invalidation Redis refused again and again is sent once more; each refusal doubles
	 * the wait from {@code retry-interval} up to this. Once the node is back, a refused invalidation that holds the
	 * confirmations back lands within it; until then instances past {@code progress.max-lag} read from the
	 * database.
	 */
	private Duration maxRetryInterval = DEFAULT_MAX_RETRY_INTERVAL;

	/** The Redis lease that makes one instance of the fleet the reader of the binary log. */
	private final Lease lease = new Lease();

	/** Waits between attempts after the stream broke. */
	private final Reconnect reconnect = new Reconnect();

	/** The tables whose row changes invalidate caches, and their key columns. */
	private final Tables tables = new Tables();

	/** How the reader confirms what it has invalidated, and how old a confirmation every instance accepts. */
	private final Progress progress = new Progress();

	public Mode getMode() {
		return this.mode;
	}

	public void setMode(Mode mode) {
		this.mode = mode;
	}

	public String getHost() {
		return this.host;
	}

	public void setHost(String host) {
		this.host = host;
	}

	public Integer getPort() {
		return this.port;
	}

	public void setPort(Integer port) {
		this.port = port;
	}

	public String getUsername() {
		return this.username;
	}

	public void setUsername(String username) {
		this.username = username;
	}

	public String getPassword() {
		return this.password;
	}

	public void setPassword(String password) {
		this.password = password;
	}

	public Long getServerId() {
		return this.serverId;
	}

	public void setServerId(Long serverId) {
		this.serverId = serverId;
	}

	public SslMode getSslMode() {
		return this.sslMode;
	}

	public void setSslMode(SslMode sslMode) {
		this.sslMode = sslMode;
	}

	public Duration getConnectTimeout() {
		return this.connectTimeout;
	}

	public void setConnectTimeout(Duration connectTimeout) {
		this.connectTimeout = connectTimeout;
	}

	public int getMaxKeysPerTransaction() {
		return this.maxKeysPerTransaction;
	}

	public void setMaxKeysPerTransaction(int maxKeysPerTransaction) {
		this.maxKeysPerTransaction = maxKeysPerTransaction;
	}

	public Duration getRetryInterval() {
		return this.retryInterval;
	}

	public void setRetryInterval(Duration retryInterval) {
		this.retryInterval = retryInterval;
	}

	public Duration getMaxRetryInterval() {
		return this.maxRetryInterval;
	}

	public void setMaxRetryInterval(Duration maxRetryInterval) {
		this.maxRetryInterval = maxRetryInterval;
	}

	public Lease getLease() {
		return this.lease;
	}

	public Reconnect getReconnect() {
		return this.reconnect;
	}

	public Tables getTables() {
		return this.tables;
	}

	public Progress getProgress() {
		return this.progress;
	}

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
	 */
	public static class Lease {

		/**
		 * How long the lease outlives its holder's last renewal (renewed, and tried by standbys, every third of
		 * it): a dead reader delays the takeover by up to 4/3 of it. A reader that cannot renew reads on, so a
		 * short lease costs at most a second reader for a while, never a gap.
		 */
		private Duration ttl = DEFAULT_LEASE_TTL;

		public Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(Duration ttl) {
			this.ttl = ttl;
		}

	}

	/**
	 * The reader's confirmations (ADR 0039): every interval it reads the server's binary log position and, once it
	 * has invalidated every change up to a position read earlier, tells every instance how long ago that was.
	 */
	public static class Progress {

		/** How often the reader reads the server's position and confirms what it has invalidated. */
		private Duration interval = DEFAULT_PROGRESS_INTERVAL;

		/**
		 * In mode {@code required}, how old the last confirmation may be before an instance reads past both cache
		 * tiers from the database: a stalled, lagging or missing reader then costs database reads, never a value
		 * older than this.
		 */
		private Duration maxLag = DEFAULT_MAX_LAG;

		/**
		 * How long a read that carries a commit position (a causal read, ADR 0038) waits for this instance to hear
		 * the reader confirm that position; past it, the read goes to the database. As long as {@link #maxLag} by
		 * default: an instance past it reads from the database anyway.
		 */
		private Duration causalReadWait = DEFAULT_MAX_LAG;

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public Duration getMaxLag() {
			return this.maxLag;
		}

		public void setMaxLag(Duration maxLag) {
			this.maxLag = maxLag;
		}

		public Duration getCausalReadWait() {
			return this.causalReadWait;
		}

		public void setCausalReadWait(Duration causalReadWait) {
			this.causalReadWait = causalReadWait;
		}

	}

	/**
	 * Waits between attempts after the stream broke (doubling from the initial to the maximum).
	 */
	public static class Reconnect {

		/** First wait after a failure. */
		private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;

		/** Longest wait between two attempts. */
		private Duration maxBackoff = DEFAULT_MAX_BACKOFF;

		public Duration getInitialBackoff() {
			return this.initialBackoff;
		}

		public void setInitialBackoff(Duration initialBackoff) {
			this.initialBackoff = initialBackoff;
		}

		public Duration getMaxBackoff() {
			return this.maxBackoff;
		}

		public void setMaxBackoff(Duration maxBackoff) {
			this.maxBackoff = maxBackoff;
		}

	}

	/**
	 * The tables whose row changes invalidate caches, and their key columns.
	 */
	public static class Tables {

		/** Schema of both tables; by default the database of {@code spring.datasource.url}. */
		private String schema;

		/** Table of concerts. */
		private String concert = "concert";

		/** Key column of {@link #concert}: the id the {@code concert} and {@code schedules} caches use. */
		private String concertId = "id";

		/** Table of schedules (start times and seat counts). */
		private String schedule = "schedule";

		/** Column of {@link #schedule} holding the concert's id: the key of the {@code schedules} cache. */
		private String scheduleConcertId = "concert_id";

		public String getSchema() {
			return this.schema;
		}

		public void setSchema(String schema) {
			this.schema = schema;
		}

		public String getConcert() {
			return this.concert;
		}

		public void setConcert(String concert) {
			this.concert = concert;
		}

		public String getConcertId() {
			return this.concertId;
		}

		public void setConcertId(String concertId) {
			this.concertId = concertId;
		}

		public String getSchedule() {
			return this.schedule;
		}

		public void setSchedule(String schedule) {
			this.schedule = schedule;
		}

		public String getScheduleConcertId() {
			return this.scheduleConcertId;
		}

		public void setScheduleConcertId(String scheduleConcertId) {
			this.scheduleConcertId = scheduleConcertId;
		}

	}

}
