package dev.concertcache.api.capture;

import java.net.URI;
import java.net.http.HttpRequest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.api.ApiApplication;
import dev.concertcache.api.ApiTestSupport;
import dev.concertcache.testsupport.MariaDbServer;
import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.DefaultTieredCacheManager;
import dev.concertcache.tiered.TieredCacheManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 16, item 1, end to end: rows changed with plain SQL on a connection of their own (another application)
 * reach every cache tier of every instance through the binary log, across a stopped capture, a purged binlog, a
 * killed binlog connection, a Redis outage and a handover of the lease. A private Redis (the tests kill it) and
 * the shared MariaDB with its binary log on.
 */
@ActiveProfiles("cache")
@DirtiesContext
class CaptureTests extends ApiTestSupport {

	/** The freshness contract (1 s) plus the 1 s resolution of the test's own polling and HTTP round trips. */
	private static final Duration PROMPTLY = Duration.ofSeconds(2);

	private static final RedisServer redisServer = new RedisServer();

	@Autowired
	private TieredCacheManager caches;

	@Autowired
	private BinlogCapture capture;

	@Autowired
	private StringRedisTemplate redis;

	@Autowired
	private MeterRegistry meters;

	@DynamicPropertySource
	static void privateRedis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> {
			redisServer.start();
			return redisServer.port();
		});
	}

	@AfterAll
	static void removeRedis() {
		redisServer.close();
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
	void plainSqlUpdateInsertAndDeleteOnAnotherConnectionAreServedByEveryInstanceWithinASecond() throws Exception {
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
			for (int port : new int[] { this.port, other }) {
				await().atMost(PROMPTLY).untilAsserted(() -> {
					assertThat(title(port, 3)).isEqualTo("Changed By SQL");
					assertThat(get(port, "/api/concerts?size=10").body()).contains("Changed By SQL");
					assertThat(get(port, "/api/concerts/3/schedules").body()).contains("\"totalSeats\":7")
						.doesNotContain("\"totalSeats\":1");
					assertThat(title(port, 999)).isEqualTo("Inserted By SQL");
				});
			}
			sql("DELETE FROM concert WHERE id = 3");
			for (int port : new int[] { this.port, other }) {
				await().atMost(PROMPTLY).untilAsserted(() -> {
					assertThat(get(port, "/api/concerts/3").status()).isEqualTo(404);
					assertThat(get(port, "/api/concerts/3/schedules").status()).as("schedules removed by cascade")
						.isEqualTo(404);
					assertThat(get(port, "/api/concerts?size=10").body()).doesNotContain("Changed By SQL");
				});
			}
		}
	}

	@Test
	void changesCommittedWhileCaptureIsStoppedAreInvalidatedWhenItStartsAgain() throws Exception {
		String before = title(this.port, 4);
		this.capture.stop();
		sql("UPDATE concert SET title = 'Changed While Stopped' WHERE id = 4");
		sql("UPDATE schedule SET total_seats = 11 WHERE concert_id = 5");
		get("/api/concerts/5/schedules");
		assertThat(title(this.port, 4)).as("cached, nobody reads the binlog").isEqualTo(before);
		this.capture.start();
		await().atMost(PROMPTLY).untilAsserted(() -> {
			assertThat(title(this.port, 4)).isEqualTo("Changed While Stopped");
			assertThat(get("/api/concerts/5/schedules").body()).contains("\"totalSeats\":11");
		});
		assertThat(positionLost()).as("resumed from the stored position, no flush").isZero();
	}

	@Test
	void aPositionPurgedFromTheServerWhileCaptureWasStoppedCostsExactlyOneFlush() throws Exception {
		title(this.port, 6);
		this.capture.stop();
		sql("UPDATE concert SET title = 'Changed Before The Purge' WHERE id = 6");
		sql("FLUSH BINARY LOGS");
		sql("PURGE BINARY LOGS BEFORE NOW() + INTERVAL 1 SECOND");
		this.capture.start();
		await().atMost(PROMPTLY).untilAsserted(() -> {
			assertThat(title(this.port, 6)).isEqualTo("Changed Before The Purge");
			assertThat(positionLost("position-gone")).isEqualTo(1);
		});
		sql("UPDATE concert SET title = 'Changed After The Purge' WHERE id = 6");
		await().atMost(PROMPTLY).untilAsserted(() -> assertThat(title(this.port, 6)).isEqualTo("Changed After The Purge"));
		assertThat(positionLost("position-gone")).isEqualTo(1);
	}

	@Test
	void aKilledBinlogConnectionResumesWithoutMissingAChange() throws Exception {
		title(this.port, 7);
		double reconnects = this.meters.counter("concert.cache.capture.reconnects").count();
		long connection = this.capture.connectionId();
		assertThat(connection).isPositive();
		sql("KILL " + connection);
		sql("UPDATE concert SET title = 'Changed After The Kill' WHERE id = 7");
		await().atMost(PROMPTLY).untilAsserted(() -> assertThat(title(this.port, 7)).isEqualTo("Changed After The Kill"));
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
			for (int port : new int[] { this.port, other }) {
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(title(port, 8)).isEqualTo("Changed While Redis Was Down"));
			}
		}
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
			for (int port : new int[] { this.port, other }) {
				await().atMost(PROMPTLY)
					.untilAsserted(() -> assertThat(title(port, 9)).isEqualTo("Changed During The Handover"));
			}
			assertThat(standby.state()).isEqualTo(BinlogCapture.State.STREAMING);
			reader.start();
		}
	}

	/** Waits until the stored position is the server's: the capture has processed everything committed so far. */
	private void awaitCaughtUp() {
		String gtid = this.jdbc.sql("SELECT @@gtid_binlog_pos").query(String.class).single();
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			String position = this.redis.opsForValue().get("concert-cache:capture:position");
			return position != null && position.endsWith(";gtid;" + gtid);
		});
	}

	private double positionLost(String reason) {
		return this.meters.find("concert.cache.capture.position.lost").tag("reason", reason).counters().stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	private double positionLost() {
		return positionLost("position-gone");
	}

	/** Runs {@code statement} on a connection of its own, as another application would. */
	private static void sql(String statement) throws SQLException {
		MariaDbServer db = MariaDbServer.shared();
		try (Connection connection = DriverManager.getConnection(db.jdbcUrl(), MariaDbServer.USER,
				MariaDbServer.PASSWORD); Statement jdbc = connection.createStatement()) {
			jdbc.execute(statement);
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

	private ConfigurableApplicationContext secondInstance() {
		MariaDbServer db = MariaDbServer.shared();
		// Arguments, not builder properties: those are defaults, below application.yml.
		return new SpringApplicationBuilder(ApiApplication.class).profiles("cache")
			.run("--server.port=0", "--management.server.port=0", "--spring.datasource.url=" + db.jdbcUrl(),
					"--spring.datasource.username=" + MariaDbServer.USER,
					"--spring.datasource.password=" + MariaDbServer.PASSWORD, "--spring.data.redis.host=127.0.0.1",
					"--spring.data.redis.port=" + redisServer.port(), "--concert-cache.admin-token=" + TOKEN,
					"--concert-cache.warmup.max-duration=0s");
	}

}
