package dev.concertcache.api.cache;

import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.ActiveProfiles;

import dev.concertcache.api.ApiApplication;
import dev.concertcache.api.CachedApiTestSupport;
import dev.concertcache.testsupport.MariaDbServer;
import dev.concertcache.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The API under the {@code cache} profile: repeated reads of a concert, a list page and schedules cost no
 * query, and a write is visible at once on this instance and, through the invalidation stream, on a second one.
 */
@ActiveProfiles("cache")
class CachedReadsTests extends CachedApiTestSupport {

	private static final String UPDATE = """
			{"title":"Changed Title","artist":"IU","venue":"KSPO Dome","description":"Three nights",
			 "startDate":"2026-12-24","endDate":"2026-12-26"}""";

	private static final List<String> READS = List.of("/api/concerts/3", "/api/concerts?size=10",
			"/api/concerts/3/schedules", "/api/concerts/999");

	@Autowired
	private MeterRegistry meters;


	@Test
	void repeatedReadsOfConcertListAndSchedulesAreServedFromL1WithoutQueries() {
		List<String> first = READS.stream().map((path) -> get(path).body()).toList();
		double l1Hits = l1Hits();
		long selects = selectsExecuted();
		for (int round = 0; round < 5; round++) {
			assertThat(READS.stream().map((path) -> get(path).body()).toList()).isEqualTo(first);
		}
		assertThat(selectsExecuted() - selects).as("SELECTs for 20 repeated reads").isZero();
		// Per round: the concert, the page's end of the list and its block (ADR 0036), the schedules, the absent 999.
		assertThat(l1Hits() - l1Hits).isEqualTo(25);
		assertThat(get("/api/concerts/999").status()).isEqualTo(404);
	}

	@Test
	void prometheusShowsTheCacheAndBreakerMetersUnderTheContractsNames() {
		get("/api/concerts/3");
		get("/api/concerts/3");
		String scrape = send(java.net.http.HttpRequest
			.newBuilder(java.net.URI.create("http://127.0.0.1:" + this.managementPort + "/actuator/prometheus"))
			.GET()
			.build()).body();
		assertThat(scrape).containsPattern("tiered_cache_gets_total\\{.*cache=\"concert\",result=\"hit\",tier=\"l1\"} [1-9]")
			.containsPattern("tiered_cache_loads_seconds_bucket\\{.*cache=\"concert\",.*result=\"success\"")
			.contains("tiered_cache_invalidation_lag_seconds_bucket")
			.containsPattern("resilience4j_circuitbreaker_state\\{.*name=\"tiered-cache-redis\",state=\"closed\"} 1.0");
	}

	@Test
	void writeIsVisibleAtOnceHereAndShortlyOnASecondInstance() {
		try (ConfigurableApplicationContext second = secondInstance()) {
			int port = second.getEnvironment().getProperty("local.server.port", Integer.class);
			READS.forEach(this::get);
			READS.forEach((path) -> get(port, path));
			long selects = selectsExecuted();
			assertThat(get(port, "/api/concerts/3").json().get("title").asString()).isNotEqualTo("Changed Title");
			assertThat(selectsExecuted() - selects).as("second instance serves from its L1").isZero();

			assertThat(write("PUT", "/api/concerts/3", UPDATE).status()).isEqualTo(200);
			assertThat(get("/api/concerts/3").json().get("title").asString()).isEqualTo("Changed Title");
			assertThat(get("/api/concerts?size=10").body()).contains("Changed Title");
			await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> {
				assertThat(get(port, "/api/concerts/3").json().get("title").asString()).isEqualTo("Changed Title");
				assertThat(get(port, "/api/concerts?size=10").body()).contains("Changed Title");
			});

			int schedulesBefore = get(port, "/api/concerts/3/schedules").json().get("schedules").size();
			assertThat(write("POST", "/api/concerts/3/schedules",
					"{\"startsAt\":\"2026-12-25T19:00:00Z\",\"totalSeats\":1200}")
				.status()).isEqualTo(201);
			await().atMost(Duration.ofSeconds(2))
				.untilAsserted(() -> assertThat(get(port, "/api/concerts/3/schedules").json().get("schedules").size())
					.isEqualTo(schedulesBefore + 1));
		}
	}

	private double l1Hits() {
		return this.meters.find("tiered.cache.gets").tags("tier", "l1", "result", "hit").functionCounters().stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	private Response get(int port, String path) {
		return send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + path))
			.GET()
			.build());
	}

	private ConfigurableApplicationContext secondInstance() {
		MariaDbServer db = MariaDbServer.shared();
		// Arguments, not builder properties: those are defaults, below application.yml.
		return new SpringApplicationBuilder(ApiApplication.class).profiles("cache")
			.run("--server.port=0", "--management.server.port=0", "--spring.datasource.url=" + db.jdbcUrl(),
					"--spring.datasource.username=" + MariaDbServer.USER,
					"--spring.datasource.password=" + MariaDbServer.PASSWORD, "--spring.data.redis.host=127.0.0.1",
					"--spring.data.redis.port=" + RedisServer.shared().port(), "--concert-cache.admin-token=" + TOKEN, "--concert-cache.cursor-secret=" + CURSOR_SECRET,
					"--concert-cache.warmup.max-duration=0s");
	}

}
