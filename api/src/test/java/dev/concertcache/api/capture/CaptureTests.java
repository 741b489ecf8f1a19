package dev.concertcache.api.capture;

import java.net.URI;
import java.net.http.HttpRequest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;
import java.util.function.Predicate;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;

import dev.concertcache.api.ApiApplication;
import dev.concertcache.api.ApiHttpTestSupport;
import dev.concertcache.testsupport.CommandTrap;
import dev.concertcache.testsupport.DatabaseServer;
import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.loader.LoaderReachability;

import static dev.concertcache.api.CachedApiTestSupport.awaitCaptureConfirmed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * End to end: rows changed with plain SQL on a connection of their own (another application)
 * reach every cache tier of every instance through the binary log, across a stopped capture, a purged binlog, a
 * killed binlog connection, a Redis outage and a handover of the lease. A private Redis (the tests kill it) and a
 * database server with its binary log on, which the tests purge and kill: a private MariaDB
 * ({@link MariaDbCaptureTests}; other readers of a shared one would block the purge) or the shared MySQL
 * ({@link MySqlCaptureTests}; nothing else reads its binary log).
 */
@ActiveProfiles("cache")
@DirtiesContext
@Import(ParkedLanding.Trapped.class)
abstract class CaptureTests extends ApiHttpTestSupport {

	/**
	 * The freshness contract is 1 s; the bound here leaves room for a test machine whose cores are shared with
	 * other builds (Redis commands were seen to time out at 250 ms there). The lag itself is measured by the
	 * {@code concert.cache.capture.lag} histogram (ADR 0033).
	 */
	private static final Duration PROMPTLY = Duration.ofSeconds(5);

	private static RedisServer redisServer;

	/** The subclass's server, set before its context starts. */
	private static DatabaseServer database;

	/** Closed after the class: the subclass's own server, unlike a JVM-wide shared one. */
	private static boolean databaseOwned;

	@Autowired
	private TieredCacheManager caches;

	@Autowired
	private BinlogCapture capture;

	@Autowired
	private LoaderReachability reachability;

	@Autowired
	private CommandTrap commands;

	@Autowired
	private CommitPositions positions;

	@Autowired
	private StringRedisTemplate redis;

	@Autowired
	private MeterRegistry meters;

	/** Called by the subclass's {@code @DynamicPropertySource}: one per subclass keeps their contexts apart. */
	static void databaseAndPrivateRedis(DynamicPropertyRegistry registry, DatabaseServer server, boolean owned) {
		database = server;
		databaseOwned = owned;
		redisServer = new RedisServer();
		registry.add("spring.datasource.url", () -> {
			database.start();
			return database.jdbcUrl();
		});
		registry.add("spring.datasource.username", () -> DatabaseServer.USER);
		registry.add("spring.datasource.password", () -> DatabaseServer.PASSWORD);
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> {
			redisServer.start();
			return redisServer.port();
		});
	}

	@AfterAll
	static void removeServers() {
		redisServer.close();
		if (databaseOwned) {
			database.close();
		}
	}

	@BeforeEach
	void freshDataAndEmptyCaches() {
		generate(30);
		awaitCaughtUp();
		((DefaultTieredCacheManager) this.caches).evictAllCaches();
	}

	@AfterEach
	void captureAndRedisRunAgain() {
		redisServer.start();
		this.capture.start();
	}

	@Test
	void plainSqlUpdateInsertAndDeleteOnAnotherConnectionAreServedByEveryInstancePromptly() throws Exception {
		try (ConfigurableApplicationContext second = secondInstance()) {
			int other = port(second);
			for (int port : new int[] { this.port, other }) {
				assertThat(title(port, 3)).isNotEqualTo("Changed By SQL");
				assertThat(get(port, "/api/concerts/999").status()).isEqualTo(404);
				get(port, "/api/concerts?size=10");
				get(port, "/api/concerts/3/schedules");
			}
			sql("UPDATE concert SET title = 'Changed By SQL' WHERE id = 3");
			sql("UPDATE schedule SET total_seats = 7 WHERE concert_id = 3");
			sql("INSERT INTO concert (id, title, artist, venue, description, start_date, end_date, created_at, "
					+ "updated_at) VALUES (999, 'Inserted By SQL', 'a', 'v', 'd', '2026-12-01', '2026-12-02', NOW(), NOW())");
			awaitConfirmedEverywhere(second);
			for (int port : new int[] { this.port, other }) {
				assertThat(title(port, 3)).isEqualTo("Changed By SQL");
				assertThat(get(port, "/api/concerts?size=10").body()).contains("Changed By SQL");
				assertThat(get(port, "/api/concerts/3/schedules").body()).contains("\"totalSeats\":7")
					.doesNotContain("\"totalSeats\":1");
				assertThat(title(port, 999)).isEqualTo("Inserted By SQL");
			}
			sql("DELETE FROM concert WHERE id = 3");
			awaitConfirmedEverywhere(second);
			for (int port : new int[] { this.port, other }) {
				assertThat(get(port, "/api/concerts/3").status()).isEqualTo(404);
				assertThat(get(port, "/api/concerts/3/schedules").status()).as("schedules removed by cascade")
					.isEqualTo(404);
				assertThat(get(port, "/api/concerts?size=10").body()).doesNotContain("Changed By SQL");
			}
		}
	}

	@Test
	void rowsOfTheDatabasesOtherTablesAreSkippedAndTheChangesAfterThemServed() throws Exception {
		title(this.port, 15);
		double reconnects = this.meters.counter("concert.cache.capture.reconnects").count();
		// The ticketing application's own tables share the database and its binary log.
		sql("CREATE TABLE IF NOT EXISTS seat_order (id BIGINT AUTO_INCREMENT PRIMARY KEY, seats INT NOT NULL)");
		sql("INSERT INTO seat_order (seats) VALUES (2)");
		sql("UPDATE seat_order SET seats = 3");
		sql("DELETE FROM seat_order");
		sql("UPDATE concert SET title = 'Changed After Orders' WHERE id = 15");
		await().atMost(PROMPTLY).untilAsserted(() -> assertThat(title(this.port, 15)).isEqualTo("Changed After Orders"));
		assertThat(this.meters.counter("concert.cache.capture.reconnects").count()).isEqualTo(reconnects);
	}

	@Test
	void aStatementThatAltersACapturedTableMakesEveryCacheStale() throws Exception {
		title(this.port, 16);
		// A change the binary log does not show: only a flush of every cache can serve it.
		sql("SET SESSION sql_log_bin = 0", "UPDATE concert SET title = 'Not In The Log' WHERE id = 16");
		sql("ALTER TABLE concert COMMENT = 'altered by a test'");
		await().atMost(PROMPTLY).untilAsserted(() -> assertThat(title(this.port, 16)).isEqualTo("Not In The Log"));
	}

	@Test
	void aStatementThatOnlyNamesACapturedTableInsideAnotherIdentifierFlushesNothing() throws Exception {
		title(this.port, 17);
		title(this.port, 18);
		sql("SET SESSION sql_log_bin = 0", "UPDATE concert SET title = 'Not In The Log' WHERE id = 17");
		sql("CREATE TABLE IF NOT EXISTS seat_hold (id BIGINT PRIMARY KEY, schedule_id BIGINT, concert_ref BIGINT)");
		// A logged change after the DDL: once it is served, the capture has read past the DDL.
		sql("UPDATE concert SET title = 'After The DDL' WHERE id = 18");
		await().atMost(PROMPTLY).untilAsserted(() -> assertThat(title(this.port, 18)).isEqualTo("After The DDL"));
		assertThat(title(this.port, 17)).as("still cached: nothing flushed").isNotEqualTo("Not In The Log");
	}

	@Test
	void changesCommittedWhileCaptureIsStoppedAreInvalidatedWhenItStartsAgain() throws Exception {
		String before = title(this.port, 4);
		double flushes = positionLost();
		this.capture.stop();
		sql("UPDATE concert SET title = 'Changed While Stopped' WHERE id = 4");
		sql("UPDATE schedule SET total_seats = 11 WHERE concert_id = 5");
		get("/api/concerts/5/schedules");
		assertThat(title(this.port, 4)).as("cached, nobody reads the binlog").isEqualTo(before);
		this.capture.start();
		assertServedOnceConfirmed(4, "Changed While Stopped");
		assertThat(get("/api/concerts/5/schedules").body()).contains("\"totalSeats\":11");
		assertThat(positionLost()).as("resumed from the stored position, no flush").isEqualTo(flushes);
	}

	@Test
	void aPositionPurgedFromTheServerWhileCaptureWasStoppedCostsExactlyOneFlush() throws Exception {
		title(this.port, 6);
		double flushes = positionLost();
		this.capture.stop();
		sql("UPDATE concert SET title = 'Changed Before The Purge' WHERE id = 6");
		// The server keeps a file that a replica's dump thread still reads; the closed one's ends shortly.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.jdbc
			.sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
			.query(Integer.class)
			.single() == 0);
		sql("FLUSH BINARY LOGS");
		sql("PURGE BINARY LOGS BEFORE NOW() + INTERVAL 1 SECOND");
		assertThat(this.jdbc.sql("SHOW BINARY LOGS").query((rs, row) -> rs.getString(1)).list()).as("purged")
			.hasSize(1);
		this.capture.start();
		await().atMost(PROMPTLY).untilAsserted(() -> {
			assertThat(title(this.port, 6)).isEqualTo("Changed Before The Purge");
			assertThat(positionLost() - flushes).isEqualTo(1);
		});
		sql("UPDATE concert SET title = 'Changed After The Purge' WHERE id = 6");
		await().atMost(PROMPTLY).untilAsserted(() -> assertThat(title(this.port, 6)).isEqualTo("Changed After The Purge"));
		assertThat(positionLost() - flushes).as("exactly one flush").isEqualTo(1);
	}

	@Test
	void aChangeTheReaderHasNotLandedIsServedFromTheDatabaseOnceItsLastConfirmationIsOlderThanMaxLag()
			throws Exception {
		try (ConfigurableApplicationContext second = secondInstance()) {
			int other = port(second);
			for (int port : new int[] { this.port, other }) {
				assertThat(title(port, 14)).isNotEqualTo("Past The Stalled Reader");
			}
			// The reader reads the change but cannot land it: a stalled landing thread, a reader far behind.
			try (ParkedLanding parked = ParkedLanding.of(this.commands)) {
				sql("UPDATE concert SET title = 'Past The Stalled Reader' WHERE id = 14");
				for (int port : new int[] { this.port, other }) {
					await().atMost(PROMPTLY)
						.untilAsserted(() -> assertThat(title(port, 14)).isEqualTo("Past The Stalled Reader"));
				}
				assertThat(tombstoned(14)).as("not invalidated: both tiers were read past").isFalse();
			}
		}
	}

	@Test
	void aChangeWhoseTombstonesRedisRefusesButEveryInstanceHeardOfLeavesTheConfirmationsGoing() throws Exception {
		title(this.port, 17);
		double retries = this.meters.counter("concert.cache.capture.retries").count();
		try (RedisClient client = RedisClient.create(RedisURI.create(redisServer.host(), redisServer.port()));
				StatefulRedisConnection<String, String> admin = client.connect()) {
			// The stream and the capture's own keys take writes, the caches' keys do not: their node is down until
			// its replica is promoted, while the stream's is up.
			acl(admin, "resetkeys", "~concert-cache:invalidations", "~{concert-cache:invalidations}:*",
					"~{concert-cache:capture}:*");
			try {
				sql("UPDATE concert SET title = 'Heard Of Everywhere' WHERE id = 17");
				await().atMost(PROMPTLY)
					.until(() -> this.meters.counter("concert.cache.capture.retries").count() > retries);
				// Every instance reads the key from the database until its tombstone lands, so the reader goes on
				// confirming: nobody reads past both tiers for it. Sixty retries, 25 ms apart: well past max-lag.
				await().atMost(PROMPTLY).until(() -> this.meters.counter("concert.cache.capture.retries")
					.count() > retries + 60);
				assertThat(((DefaultTieredCacheManager) this.caches).getChangeFeedSilence())
					.isLessThan(Duration.ofMillis(750));
				assertThat(title(this.port, 17)).isEqualTo("Heard Of Everywhere");
			}
			finally {
				acl(admin, "allkeys");
			}
		}
	}

	@Test
	void whileTheDatabaseIsDownTheReaderSaysSoBeforeAnyLoadAndNoCachedValueIsServedAsFreshPastMaxLag() {
		title(this.port, 16);
		assertThat(get(this.port, "/api/concerts/16/schedules").status()).isEqualTo(200);
		assertThat(this.reachability.lastUnreachable()).isNull();
		database.kill();
		try {
			// The reader's next connect is refused: the caches' loads try the database one at a time from then on,
			// before any load has waited for the pool's connection timeout (ADR 0030).
			await().atMost(PROMPTLY).until(() -> this.reachability.lastUnreachable() != null);
			// A change committed just before the outage may not have landed: nobody can vouch for the tiers now, so
			// what they hold within its time to live is served marked stale, schedules included (ADR 0031).
			await().atMost(PROMPTLY).untilAsserted(() -> {
				Response schedules = get(this.port, "/api/concerts/16/schedules");
				assertThat(schedules.status()).isEqualTo(200);
				assertThat(schedules.header("Cache-Status")).contains("fwd=stale");
			});
			Response concert = get(this.port, "/api/concerts/16");
			assertThat(concert.status()).as("stale-if-error, marked").isEqualTo(200);
			assertThat(concert.header("Cache-Status")).contains("fwd=stale");
		}
		finally {
			database.start();
		}
		// Back: the reader confirms again and the tiers answer as fresh.
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			Response schedules = get(this.port, "/api/concerts/16/schedules");
			assertThat(schedules.status()).isEqualTo(200);
			assertThat(schedules.header("Cache-Status")).doesNotContain("fwd=stale");
		});
		// And the pool has a connection again: it reconnects in the background, after a backoff, and the next test
		// starts with a write.
		await().atMost(Duration.ofSeconds(20)).ignoreExceptions()
			.until(() -> this.jdbc.sql("SELECT 1").query(Integer.class).single() == 1);
	}

	@Test
	void aCheckpointTheStreamsNodeWentBackToMakesTheReaderInvalidateAgainEveryChangeAfterIt() throws Exception {
		String checkpoint = "{concert-cache:invalidations}:feed";
		String before = this.redis.opsForValue().get(checkpoint);
		assertThat(before).isNotNull();
		title(this.port, 8);
		sql("UPDATE concert SET title = 'Lost With A Failover' WHERE id = 8");
		await().atMost(PROMPTLY).until(() -> tombstoned(8) && !before.equals(this.redis.opsForValue().get(checkpoint)));
		double replays = replays();

		// What a promoted replica that never received the landing holds: the checkpoint before it, and no tombstone.
		this.redis.opsForValue().set(checkpoint, before);
		this.redis.delete(this.redis.keys("concert-cache:v1:concert:*{concert:8}"));

		await().atMost(PROMPTLY).untilAsserted(() -> {
			assertThat(tombstoned(8)).as("invalidated again").isTrue();
			assertThat(replays() - replays).isEqualTo(1);
		});
		awaitCaptureConfirmed(this.caches);
		assertThat(title(this.port, 8)).isEqualTo("Lost With A Failover");
	}

	@Test
	void aKilledBinlogConnectionResumesWithoutMissingAChange() throws Exception {
		title(this.port, 7);
		double reconnects = this.meters.counter("concert.cache.capture.reconnects").count();
		long connection = this.capture.connectionId();
		assertThat(connection).isPositive();
		sql("KILL " + connection);
		sql("UPDATE concert SET title = 'Changed After The Kill' WHERE id = 7");
		assertServedOnceConfirmed(7, "Changed After The Kill");
		assertThat(this.meters.counter("concert.cache.capture.reconnects").count()).isGreaterThan(reconnects);
		assertThat(this.capture.connectionId()).isNotEqualTo(connection);
	}

	@Test
	void aChangeThatArrivesWhileRedisIsDownIsRepairedOnEveryInstanceWhenItReturns() throws Exception {
		try (ConfigurableApplicationContext second = secondInstance()) {
			int other = port(second);
			title(this.port, 8);
			title(other, 8);
			redisServer.kill();
			sql("UPDATE concert SET title = 'Changed While Redis Was Down' WHERE id = 8");
			redisServer.start();
			assertServedOnceConfirmed(8, "Changed While Redis Was Down", second);
		}
	}

	@Test
	void anInvalidationRedisRefusesIsSentAgainOnTheSameBinlogConnectionWithoutAReplay() throws Exception {
		title(this.port, 10);
		double reconnects = this.meters.counter("concert.cache.capture.reconnects").count();
		double retries = this.meters.counter("concert.cache.capture.retries").count();
		long connection = this.capture.connectionId();
		// Writes stall past the command timeout, on a Redis that keeps its data (the lease and the position).
		try (RedisClient client = RedisClient.create(RedisURI.create(redisServer.host(), redisServer.port()));
				StatefulRedisConnection<String, String> admin = client.connect()) {
			pause(admin, PROMPTLY);
			sql("UPDATE concert SET title = 'Sent Again' WHERE id = 10");
			// Writes go through again only once the capture has seen Redis refuse this transaction's invalidations.
			await().atMost(PROMPTLY)
				.until(() -> this.meters.counter("concert.cache.capture.retries").count() > retries);
			admin.sync().dispatch(CommandType.CLIENT, new StatusOutput<>(StringCodec.UTF8),
					new CommandArgs<>(StringCodec.UTF8).add("UNPAUSE"));
		}
		assertServedOnceConfirmed(10, "Sent Again");
		assertThat(this.meters.counter("concert.cache.capture.reconnects").count()).isEqualTo(reconnects);
		assertThat(this.capture.connectionId()).isEqualTo(connection);
	}

	@Test
	void aReaderWhoseLeaseCannotBeRenewedReadsOnAndServesTheChangeWithoutAReplay() throws Exception {
		title(this.port, 13);
		long connection = this.capture.connectionId();
		double reconnects = this.meters.counter("concert.cache.capture.reconnects").count();
		try (RedisClient client = RedisClient.create(RedisURI.create(redisServer.host(), redisServer.port()));
				StatefulRedisConnection<String, String> admin = client.connect()) {
			// No write lands, as with the lease's node down until its replica is promoted; reads go on.
			pause(admin, Duration.ofMinutes(1));
			try {
				await().atMost(Duration.ofSeconds(20))
					.until(() -> String.valueOf(this.capture.lastProblem()).contains("lease could not be renewed"));
				sql("UPDATE concert SET title = 'Read Past The Lease' WHERE id = 13");
				await().atMost(PROMPTLY)
					.untilAsserted(() -> assertThat(title(this.port, 13)).isEqualTo("Read Past The Lease"));
			}
			finally {
				admin.sync().dispatch(CommandType.CLIENT, new StatusOutput<>(StringCodec.UTF8),
						new CommandArgs<>(StringCodec.UTF8).add("UNPAUSE"));
			}
		}
		await().atMost(PROMPTLY).until(() -> this.capture.lastProblem() == null);
		assertThat(this.capture.state()).isEqualTo(BinlogCapture.State.STREAMING);
		assertThat(this.capture.connectionId()).isEqualTo(connection);
		assertThat(this.meters.counter("concert.cache.capture.reconnects").count()).isEqualTo(reconnects);
	}

	@Test
	void aLaterTransactionIsTombstonedWhileTheStreamRefusesAnEarlierOnesAnnouncement() throws Exception {
		title(this.port, 11);
		title(this.port, 12);
		double retries = this.meters.counter("concert.cache.capture.retries").count();
		try (RedisClient client = RedisClient.create(RedisURI.create(redisServer.host(), redisServer.port()));
				StatefulRedisConnection<String, String> admin = client.connect()) {
			// The stream takes no message, as with its node down; every other key takes writes.
			acl(admin, "-xadd");
			try {
				sql("UPDATE concert SET title = 'Not Announced' WHERE id = 11");
				await().atMost(PROMPTLY)
					.until(() -> this.meters.counter("concert.cache.capture.retries").count() > retries);
				sql("UPDATE concert SET title = 'Tombstoned Meanwhile' WHERE id = 12");

				// Readers that cannot hear the stream read through Redis: the tombstone is what keeps them fresh.
				await().atMost(PROMPTLY).until(() -> tombstoned(12));
			}
			finally {
				acl(admin, "+xadd");
			}
		}
		await().atMost(PROMPTLY).untilAsserted(() -> {
			assertThat(title(this.port, 11)).isEqualTo("Not Announced");
			assertThat(title(this.port, 12)).isEqualTo("Tombstoned Meanwhile");
		});
	}

	@Test
	void whenTheReadingInstanceStopsAnotherTakesOverWithoutMissingAChange() throws Exception {
		try (ConfigurableApplicationContext second = secondInstance()) {
			int other = port(second);
			BinlogCapture secondCapture = second.getBean(BinlogCapture.class);
			title(this.port, 9);
			title(other, 9);
			BinlogCapture reader = (this.capture.state() == BinlogCapture.State.STREAMING) ? this.capture : secondCapture;
			BinlogCapture standby = (reader == this.capture) ? secondCapture : this.capture;
			assertThat(standby.state()).isEqualTo(BinlogCapture.State.STANDBY);
			reader.stop();
			sql("UPDATE concert SET title = 'Changed During The Handover' WHERE id = 9");
			assertServedOnceConfirmed(9, "Changed During The Handover", second);
			assertThat(standby.state()).isEqualTo(BinlogCapture.State.STREAMING);
			reader.start();
		}
	}

	@Test
	void aReaderStopsOnlyWhenAnotherHolderHasTheLeaseAndTheNextHolderReplaysWhatNobodyRead() throws Exception {
		try (ConfigurableApplicationContext second = secondInstance()) {
			int other = port(second);
			BinlogCapture secondCapture = second.getBean(BinlogCapture.class);
			title(this.port, 14);
			title(other, 14);
			// A holder neither instance knows (an instance that died holding it), until the test removes it.
			this.redis.opsForValue().set("{concert-cache:capture}:leader", "a-dead-reader", Duration.ofMinutes(1));
			try {
				await().atMost(PROMPTLY).until(() -> this.capture.state() == BinlogCapture.State.STANDBY
						&& secondCapture.state() == BinlogCapture.State.STANDBY);
				sql("UPDATE concert SET title = 'Committed While Nobody Read' WHERE id = 14");
			}
			finally {
				this.redis.delete("{concert-cache:capture}:leader");
			}
			assertServedOnceConfirmed(14, "Committed While Nobody Read", second);
		}
	}

	@Test
	void prometheusEndpointHasTheCaptureMetersTheDashboardsRead() throws Exception {
		sql("UPDATE concert SET title = 'Metered' WHERE id = 3");
		awaitCaughtUp();
		double lost = positionLost("no-position");
		this.capture.stop();
		// The reader starts from the checkpoint beside the stream (ADR 0039, "The reader's checkpoint").
		this.redis.delete("{concert-cache:invalidations}:feed");
		this.capture.start();
		await().atMost(PROMPTLY).until(() -> positionLost("no-position") > lost);
		// The names ops/grafana/dashboards/cache.json and the built-in dashboard (dashboard.js) query.
		assertThat(management("/actuator/prometheus").body())
			.contains("concert_cache_capture_events_total{table=\"concert\",type=\"update\"}")
			.contains("concert_cache_capture_lag_seconds_bucket{")
			.contains("concert_cache_capture_reconnects_total ")
			.contains("concert_cache_capture_retries_total ")
			.contains("concert_cache_capture_replays_total ")
			.contains("concert_cache_capture_position_lost_total{reason=\"no-position\"}")
			.contains("concert_cache_capture_leader 1.0")
			.contains("concert_cache_capture_position ");
	}

	/** Holds every write command (scripts included) for {@code duration}; reads go on. */
	private static void pause(StatefulRedisConnection<String, String> admin, Duration duration) {
		admin.sync().dispatch(CommandType.CLIENT, new StatusOutput<>(StringCodec.UTF8),
				new CommandArgs<>(StringCodec.UTF8).add("PAUSE").add(duration.toMillis()).add("WRITE"));
	}

	/**
	 * Changes what the default user (every client here) may run or touch: {@code -xadd} or {@code +xadd}, {@code
	 * resetkeys ~pattern...} or {@code allkeys}.
	 */
	private static void acl(StatefulRedisConnection<String, String> admin, String... rules) {
		CommandArgs<String, String> arguments = new CommandArgs<>(StringCodec.UTF8).add("SETUSER").add("default");
		for (String rule : rules) {
			arguments.add(rule);
		}
		admin.sync().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), arguments);
	}

	/** Whether Redis holds a tombstone for concert {@code id} under the current generation (any shape). */
	private boolean tombstoned(long id) {
		String generation = this.redis.opsForValue().get("concert-cache:v1:concert:generation");
		Set<String> keys = this.redis.keys("concert-cache:v1:concert:g" + generation + ":*:{concert:" + id + "}");
		return keys.stream()
			.map((key) -> this.redis.opsForValue().get(key))
			.anyMatch((value) -> value != null && value.contains("\"tombstone\""));
	}

	/** Waits until the checkpoint is the server's position: the capture has processed everything committed so far. */
	private void awaitCaughtUp() {
		String gtid = this.jdbc.sql((database.flavor() == DatabaseServer.Flavor.MYSQL)
				? "SELECT REPLACE(@@gtid_executed, '\n', '')" : "SELECT @@gtid_binlog_pos").query(String.class).single();
		await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
			String position = this.redis.opsForValue().get("{concert-cache:invalidations}:feed");
			return position != null && position.endsWith(";gtid;" + gtid);
		});
	}

	private double positionLost(String reason) {
		return this.meters.find("concert.cache.capture.position.lost").tag("reason", reason).counters().stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	/** Reads started again from the checkpoint the invalidation stream's node holds. */
	private double replays() {
		return this.meters.find("concert.cache.capture.replays").counters().stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	/** Flushes of every tier because the stored position was gone from the server. */
	private double positionLost() {
		return positionLost("position-gone");
	}

	/** Runs {@code statements} on a connection of their own, as another application would. */
	private static void sql(String... statements) throws SQLException {
		DatabaseServer db = database;
		try (Connection connection = DriverManager.getConnection(db.jdbcUrl(), DatabaseServer.USER,
				DatabaseServer.PASSWORD); Statement jdbc = connection.createStatement()) {
			for (String statement : statements) {
				jdbc.execute(statement);
			}
		}
	}

	private String title(int port, long id) {
		Response response = get(port, "/api/concerts/" + id);
		return (response.status() == 200) ? response.json().get("title").asString() : "(" + response.status() + ")";
	}

	private Response get(int port, String path) {
		return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build());
	}

	private static int port(ConfigurableApplicationContext context) {
		return context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
	}

	/**
	 * Waits until every instance has heard the reader confirm the server's position now, then reads concert
	 * {@code id} once on each: its tiers are trusted again by then, so the new title is served only if the reader
	 * invalidated the change (ADR 0038), not because the instance read past tiers it no longer trusted.
	 */
	private void assertServedOnceConfirmed(long id, String title, ConfigurableApplicationContext... others)
			throws Exception {
		awaitConfirmedEverywhere(others);
		assertThat(title(this.port, id)).isEqualTo(title);
		for (ConfigurableApplicationContext other : others) {
			assertThat(title(port(other), id)).isEqualTo(title);
		}
	}

	/** Waits until this instance and {@code others} have heard the reader confirm the server's position now. */
	private void awaitConfirmedEverywhere(ConfigurableApplicationContext... others) throws SQLException {
		Predicate<String> committed = this.positions.covering(this.positions.now());
		try {
			assertThat(this.caches.awaitChangeFeed(committed, PROMPTLY)).as("confirmed on this instance").isTrue();
			for (ConfigurableApplicationContext other : others) {
				assertThat(other.getBean(TieredCacheManager.class).awaitChangeFeed(committed, PROMPTLY))
					.as("confirmed on the other instance")
					.isTrue();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private ConfigurableApplicationContext secondInstance() {
		DatabaseServer db = database;
		// Arguments, not builder properties: those are defaults, below application.yml.
		return new SpringApplicationBuilder(ApiApplication.class).profiles("cache")
			.run("--server.port=0", "--management.server.port=0", "--spring.datasource.url=" + db.jdbcUrl(),
					"--spring.datasource.username=" + DatabaseServer.USER,
					"--spring.datasource.password=" + DatabaseServer.PASSWORD, "--spring.data.redis.host=127.0.0.1",
					"--spring.data.redis.port=" + redisServer.port(), "--concert-cache.admin-token=" + TOKEN, "--concert-cache.cursor-secret=" + CURSOR_SECRET,
					"--concert-cache.warmup.max-duration=0s");
	}

}
