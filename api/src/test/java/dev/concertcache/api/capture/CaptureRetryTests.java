package dev.concertcache.api.capture;

import java.net.URI;
import java.net.http.HttpRequest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;

import dev.concertcache.api.ApiHttpTestSupport;
import dev.concertcache.testsupport.DatabaseServer;
import dev.concertcache.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A landing that Redis refuses in part, end to end: rows changed with plain SQL while Redis's access rules refuse
 * the writes of some keys, as a down cluster node refuses those of its slots. What Redis took is announced once;
 * only what it refused is sent again; a statement that alters a captured table moves each cache's generation once,
 * however often the one whose counter is refused is tried again. Counted on the invalidation stream, the
 * generation counters and Redis's log of refused commands. On a private MariaDB ({@link MariaDbCaptureRetryTests})
 * and the shared MySQL ({@link MySqlCaptureRetryTests}).
 */
@ActiveProfiles("cache")
@DirtiesContext
abstract class CaptureRetryTests extends ApiHttpTestSupport {

	private static final String STREAM = "concert-cache:invalidations";

	private static RedisServer redisServer;

	/** The subclass's server, set before its context starts. */
	private static DatabaseServer database;

	/** Closed after the class: the subclass's own server, unlike a JVM-wide shared one. */
	private static boolean databaseOwned;

	private RedisClient client;

	private StatefulRedisConnection<String, String> admin;

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
	void dataAndAnAdminConnection() {
		generate(30);
		this.client = RedisClient.create(RedisURI.create(redisServer.host(), redisServer.port()));
		this.admin = this.client.connect();
		this.admin.sync().aclLogReset();
		// Every change so far landed: nothing of the data's own is announced during a test.
		String gtid = this.jdbc.sql((database.flavor() == DatabaseServer.Flavor.MYSQL)
				? "SELECT REPLACE(@@gtid_executed, '\n', '')" : "SELECT @@gtid_binlog_pos").query(String.class).single();
		await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
			String position = this.admin.sync().get("{concert-cache:invalidations}:feed");
			return position != null && position.endsWith(";gtid;" + gtid);
		});
	}

	@AfterEach
	void everyKeyWritableAgain() {
		redisServer.command("ACL", "SETUSER", "default", "allkeys");
		this.admin.close();
		this.client.shutdown();
	}

	@Test
	void aKeyRedisRefusesIsTheOnlyOneSentAgain() throws Exception {
		String since = lastMessageId();
		// Every write but those of the schedules of concert 21, whose slot's node is down.
		writableOnly("~concert-cache:v1:*:generation", "~concert-cache:v1:*:shapes", "~*{concert:*",
				"~*{concert-list:*", "~*{concert-list-end:*", "~*{schedules:[^2]*}", "~*{schedules:2}",
				"~*{schedules:2[^1]*}", "~*{schedules:21?*}");
		sql("UPDATE concert SET title = 'Landed Once' WHERE id = 21");

		// The lander's first retries, 25, 50 and 100 ms apart, then some.
		await().atMost(Duration.ofSeconds(10)).until(() -> refusals("{schedules:21}") >= 5);

		assertThat(landed(since, "concert", "21")).as("announced once, never sent again").isEqualTo(1);
		assertThat(landed(since, "concert-list-end", "end")).isEqualTo(1);
		assertThat(landed(since, "schedules", "21")).isZero();

		redisServer.command("ACL", "SETUSER", "default", "allkeys");
		await().atMost(Duration.ofSeconds(10)).until(() -> landed(since, "schedules", "21") >= 1);
		assertThat(title(21)).isEqualTo("Landed Once");
		assertThat(landed(since, "concert", "21")).isEqualTo(1);
	}

	@Test
	void aStatementThatAltersACapturedTableMovesEachGenerationOnceWhileAnotherCountersIsRefused() throws Exception {
		String since = lastMessageId();
		String before = generation("concert");
		// Every write but those of the schedules' generation counter, whose node is down.
		writableOnly("~*{*", "~concert-cache:v1:concert:*", "~concert-cache:v1:concert-list:*",
				"~concert-cache:v1:concert-list-end:*");
		sql("ALTER TABLE concert COMMENT = 'altered while a counter is refused'");

		await().atMost(Duration.ofSeconds(10)).until(() -> !Objects.equals(generation("concert"), before));
		String moved = generation("concert");
		await().atMost(Duration.ofSeconds(10)).until(() -> refusals("concert-cache:v1:schedules:generation") >= 5);

		assertThat(generation("concert")).as("moved once").isEqualTo(moved);
		assertThat(landed(since, "concert", "*")).isEqualTo(1);
		assertThat(landed(since, "concert-list", "*")).isEqualTo(1);
		assertThat(landed(since, "concert-list-end", "*")).isEqualTo(1);
		assertThat(landed(since, "schedules", "*")).isZero();

		redisServer.command("ACL", "SETUSER", "default", "allkeys");
		await().atMost(Duration.ofSeconds(10)).until(() -> landed(since, "schedules", "*") >= 1);
		assertThat(generation("concert")).isEqualTo(moved);
	}

	/**
	 * Lets the default user (every client here) write only the stream, the capture's keys, the keys with a hash
	 * tag of the caches' own and those {@code patterns} match; reads stay allowed everywhere.
	 */
	private static void writableOnly(String... patterns) {
		List<String> rules = new ArrayList<>(List.of("ACL", "SETUSER", "default", "resetkeys", "%R~*", "~" + STREAM,
				"~{" + STREAM + "}:*", "~{concert-cache:capture}:*", "~{concert-cache:v1:*"));
		rules.addAll(List.of(patterns));
		redisServer.command(rules.toArray(String[]::new));
	}

	/** Writes Redis refused for keys that contain {@code key}, by its log of refused commands. */
	private long refusals(String key) {
		return this.admin.sync()
			.aclLog()
			.stream()
			.filter((entry) -> String.valueOf(entry.get("object")).contains(key))
			.mapToLong((entry) -> ((Number) entry.get("count")).longValue())
			.sum();
	}

	/**
	 * Invalidations of {@code key} ({@code *} for the whole cache) of {@code cache} that landed, announced on the
	 * stream after message {@code since}; announcements that one did not land name generation -1.
	 */
	private long landed(String since, String cache, String key) {
		List<StreamMessage<String, String>> messages = this.admin.sync()
			.xrange(STREAM, Range.create(since, "+"));
		return messages.stream()
			.map(StreamMessage::getBody)
			.filter((body) -> cache.equals(body.get("cache")) && key.equals(body.get("key")))
			.filter((body) -> !"-1".equals(body.get("gen")))
			.count();
	}

	private String lastMessageId() {
		List<StreamMessage<String, String>> last = this.admin.sync().xrevrange(STREAM, Range.create("-", "+"),
				io.lettuce.core.Limit.from(1));
		return last.isEmpty() ? "0" : "(" + last.get(0).getId();
	}

	private String generation(String cache) {
		return this.admin.sync().get("concert-cache:v1:" + cache + ":generation");
	}

	private String title(long id) {
		Response response = send(
				HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/api/concerts/" + id)).GET().build());
		return (response.status() == 200) ? response.json().get("title").asString() : "(" + response.status() + ")";
	}

	/** Runs {@code statements} on a connection of their own, as another application would. */
	private static void sql(String... statements) throws SQLException {
		try (Connection connection = DriverManager.getConnection(database.jdbcUrl(), DatabaseServer.USER,
				DatabaseServer.PASSWORD); Statement jdbc = connection.createStatement()) {
			for (String statement : statements) {
				jdbc.execute(statement);
			}
		}
	}

}
