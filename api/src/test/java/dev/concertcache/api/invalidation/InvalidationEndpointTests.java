package dev.concertcache.api.invalidation;

import java.net.http.HttpRequest.BodyPublishers;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.stream.LongStream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.api.ApiTestSupport;
import dev.concertcache.testsupport.MariaDbServer;
import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.TieredCacheManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code POST /api/cache/invalidations} under the {@code cache} profile, against a Redis of this class's own that a
 * test kills: a change made with plain SQL past the service is served once invalidated, bad input is a 400 naming
 * the field, and an invalidation Redis did not take is a 503 with Retry-After, never an acknowledged loss.
 */
@ActiveProfiles("cache")
class InvalidationEndpointTests extends ApiTestSupport {

	private static final String PATH = "/api/cache/invalidations";

	private static final RedisServer redis = new RedisServer();

	@Autowired
	private TieredCacheManager caches;

	@DynamicPropertySource
	static void privateRedis(DynamicPropertyRegistry registry) {
		// The endpoint is for writers the binlog does not cover: with the capture on, the plain SQL changes below
		// would be invalidated before the request this class tests.
		registry.add("concert-cache.capture.mode", () -> "off");
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> {
			redis.start();
			return redis.port();
		});
	}

	@AfterAll
	static void removeRedis() {
		redis.close();
	}

	@BeforeEach
	void freshDataAndEmptyCaches() {
		generate(30);
		((DefaultTieredCacheManager) this.caches).evictAllCaches();
	}

	@Test
	void aChangeMadeWithPlainSqlIsServedOnceItsConcertIsInvalidated() throws SQLException {
		String title = get("/api/concerts/5").json().get("title").asString();
		assertThat(get("/api/concerts?size=10").body()).contains(title);
		int seats = get("/api/concerts/5/schedules").json().at("/schedules/0/totalSeats").asInt();

		sql("UPDATE concert SET title = 'Renamed Elsewhere' WHERE id = 5",
				"UPDATE schedule SET total_seats = total_seats + 1 WHERE concert_id = 5");
		assertThat(get("/api/concerts/5").json().get("title").asString()).as("cached, nothing evicted").isEqualTo(title);
		assertThat(get("/api/concerts?size=10").body()).contains(title);

		Response response = write("POST", PATH, "{\"concertIds\":[5,7,5]}");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.json().get("concertIds").toString()).isEqualTo("[5,7]");
		assertThat(response.json().get("caches").toString()).isEqualTo("[\"concert\",\"schedules\",\"concert-list\",\"concert-list-end\"]");

		assertThat(get("/api/concerts/5").json().get("title").asString()).isEqualTo("Renamed Elsewhere");
		assertThat(get("/api/concerts?size=10").body()).contains("Renamed Elsewhere").doesNotContain(title);
		assertThat(get("/api/concerts/5/schedules").json().at("/schedules/0/totalSeats").asInt()).isEqualTo(seats + 1);
	}

	@Test
	void withoutTheAdminTokenItIs401AndInvalidatesNothing() throws SQLException {
		String title = get("/api/concerts/5").json().get("title").asString();
		sql("UPDATE concert SET title = 'Renamed Elsewhere' WHERE id = 5");
		Response anonymous = send(request(PATH).header("Content-Type", "application/json")
			.POST(BodyPublishers.ofString("{\"concertIds\":[5]}"))
			.build());
		Response wrongToken = send(request(PATH).header("Content-Type", "application/json")
			.header("Authorization", "Bearer wrong")
			.POST(BodyPublishers.ofString("{\"concertIds\":[5]}"))
			.build());
		assertThat(anonymous.status()).isEqualTo(401);
		assertThat(anonymous.contentType()).startsWith("application/problem+json");
		assertThat(wrongToken.status()).isEqualTo(401);
		assertThat(get("/api/concerts/5").json().get("title").asString()).isEqualTo(title);
	}

	@ParameterizedTest(name = "{0} is a 400 naming {1}")
	@CsvSource(delimiter = '|', value = { "{}|concertIds", "{\"concertIds\":null}|concertIds",
			"{\"concertIds\":[]}|concertIds", "{\"concertIds\":[3,-1]}|concertIds[1]",
			"{\"concertIds\":[0]}|concertIds[0]", "{\"concertIds\":[3,null]}|concertIds[1]",
			"{\"concertIds\":[\"x\"]}|concertIds[0]", "{\"concertIds\":7}|concertIds" })
	void badInputIsA400NamingTheField(String body, String field) {
		Response response = write("POST", PATH, body);
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.contentType()).startsWith("application/problem+json");
		assertThat(response.errorField()).isEqualTo(field);
	}

	@Test
	void moreThanAThousandIdsIsA400NamingConcertIds() {
		String ids = String.join(",", LongStream.rangeClosed(1, 1001).mapToObj(Long::toString).toList());
		Response response = write("POST", PATH, "{\"concertIds\":[" + ids + "]}");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.errorField()).isEqualTo("concertIds");
		assertThat(write("POST", PATH, "{\"concertIds\":[" + ids.substring(0, ids.lastIndexOf(',')) + "]}").status())
			.isEqualTo(200);
	}

	@Test
	void malformedJsonOrNoBodyIsA400AndAnotherContentTypeA415() {
		Response malformed = write("POST", PATH, "{\"concertIds\": [1,");
		assertThat(malformed.status()).isEqualTo(400);
		assertThat(malformed.contentType()).startsWith("application/problem+json");
		assertThat(write("POST", PATH, null).status()).isEqualTo(400);
		Response text = send(request(PATH).header("Authorization", "Bearer " + TOKEN)
			.header("Content-Type", "text/plain")
			.POST(BodyPublishers.ofString("{\"concertIds\":[1]}"))
			.build());
		assertThat(text.status()).isEqualTo(415);
		assertThat(text.contentType()).startsWith("application/problem+json");
	}

	@Test
	void withRedisDownItIs503WithRetryAfterAndWorksOnceRedisIsBack() throws SQLException {
		get("/api/concerts/5");
		redis.kill();
		try {
			Response refused = write("POST", PATH, "{\"concertIds\":[5]}");
			assertThat(refused.status()).isEqualTo(503);
			assertThat(refused.contentType()).startsWith("application/problem+json");
			assertThat(refused.header("Retry-After")).isEqualTo("2");
			assertThat(refused.json().get("detail").asString()).contains("repeat the request");
		}
		finally {
			redis.start();
		}
		sql("UPDATE concert SET title = 'Renamed Elsewhere' WHERE id = 5");
		await().atMost(Duration.ofSeconds(30))
			.until(() -> write("POST", PATH, "{\"concertIds\":[5]}").status() == 200);
		assertThat(get("/api/concerts/5").json().get("title").asString()).isEqualTo("Renamed Elsewhere");
	}

	@Test
	void theOpenApiDocumentDescribesTheEndpoint() {
		Response docs = get("/v3/api-docs");
		assertThat(docs.status()).isEqualTo(200);
		assertThat(docs.json().at("/paths/~1api~1cache~1invalidations/post/responses").propertyNames())
			.contains("200", "400", "401", "503");
		assertThat(docs.json().at("/components/schemas/InvalidationRequest/properties/concertIds/maxItems").asInt())
			.isEqualTo(1000);
	}

	/** Runs {@code statements} on a connection of its own, past the service and its cache. */
	private static void sql(String... statements) throws SQLException {
		MariaDbServer db = MariaDbServer.shared();
		try (Connection connection = DriverManager.getConnection(db.jdbcUrl(), MariaDbServer.USER,
				MariaDbServer.PASSWORD); Statement statement = connection.createStatement()) {
			for (String sql : statements) {
				statement.executeUpdate(sql);
			}
		}
	}

}
