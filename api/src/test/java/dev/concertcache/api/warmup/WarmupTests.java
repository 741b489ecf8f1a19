package dev.concertcache.api.warmup;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;

import dev.concertcache.api.ApiProperties;
import dev.concertcache.api.ApiTestSupport;
import dev.concertcache.api.CachedApiTestSupport;
import dev.concertcache.tiered.TieredCacheManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JIT warm-up before readiness (ADR 0202) against the real MariaDB and Redis: it replays the journey over
 * HTTP through the database, and the caches are as cold afterwards as before, shown with the database's SELECT
 * count, the L1 size meters and the keys in Redis.
 */
@ActiveProfiles("cache")
class WarmupTests extends ApiTestSupport {

	private static final String KEY_PREFIX = "warmup-test-" + UUID.randomUUID().toString().substring(0, 8);

	@Autowired
	private WarmupRunner warmup;

	@Autowired
	private StringRedisTemplate redis;

	@Autowired
	private MeterRegistry meters;

	@Autowired
	private ApplicationContext context;

	@DynamicPropertySource
	static void redisAndAShortWarmup(DynamicPropertyRegistry registry) {
		CachedApiTestSupport.redis(registry);
		registry.add("tiered-cache.key-prefix", () -> KEY_PREFIX);
		registry.add("concert-cache.warmup.max-duration", () -> "2s");
		// This JVM ran other tests before: its start is no bound here, except where a test says so.
		registry.add("concert-cache.warmup.ready-within", () -> "365d");
		// No warm-up concurrency: as many as the server's request threads.
		registry.add("server.jetty.threads.max", () -> "8");
		registry.add("server.jetty.threads.min", () -> "2");
	}

	@BeforeEach
	void data() {
		generate(30);
	}

	@Test
	void warmupReadsThroughToTheDatabaseAndLeavesTheCachesCold() throws Exception {
		long selects = selectsExecuted();
		Set<String> keys = this.redis.keys(KEY_PREFIX + ":*");
		Map<String, Double> l1Sizes = l1Sizes();

		this.warmup.run(null);

		WarmupRunner.Result result = this.warmup.result();
		assertThat(result.requests()).isGreaterThan(100);
		assertThat(result.failed()).isZero();
		assertThat(selectsExecuted() - selects).as("loads of the warm-up's twins").isGreaterThan(30);
		assertThat(this.redis.keys(KEY_PREFIX + ":*")).as("Redis as before").isEqualTo(keys);
		assertThat(l1Sizes()).as("L1 as before").isEqualTo(l1Sizes);
		assertThat(this.warmup.hotSet().complete()).as("the hot-set fill ran after the warm-up").isTrue();
	}

	@Test
	void theWarmupEndsReadyWithinAfterTheJvmStartedThoughItsMaxDurationIsLonger() throws Exception {
		Duration readyWithin = Duration.ofMillis(ManagementFactory.getRuntimeMXBean().getUptime()).plusSeconds(3);
		WarmupRunner runner = runner(Duration.ofSeconds(60), readyWithin);

		runner.run(null);

		assertThat(runner.result().requests()).isGreaterThan(0);
		assertThat(runner.result().settled()).isFalse();
		// Its deadline, then the requests in flight answered (a busy test machine takes seconds): far from 60 s.
		assertThat(runner.result().took()).isLessThan(Duration.ofSeconds(30));
	}

	@Test
	void noWarmupOnceReadyWithinHasPassedSinceTheJvmStarted() throws Exception {
		WarmupRunner runner = runner(Duration.ofSeconds(60), Duration.ofMillis(1));
		long selects = selectsExecuted();

		runner.run(null);

		assertThat(runner.result().requests()).isZero();
		assertThat(selectsExecuted()).isEqualTo(selects);
	}

	@Test
	void theWarmupKeepsAsManyRequestsInFlightAsTheServerHasRequestThreads() throws Exception {
		this.warmup.run(null);

		assertThat(this.warmup.result().concurrency()).isEqualTo(8);
	}

	@Test
	void theFirstReadAfterTheWarmupLoadsFromTheDatabaseAndTheSecondIsAHit() throws Exception {
		this.warmup.run(null);

		long selects = selectsExecuted();
		assertThat(get("/api/concerts/7").status()).isEqualTo(200);
		assertThat(selectsExecuted() - selects).isEqualTo(1);
		assertThat(get("/api/concerts/7").status()).isEqualTo(200);
		assertThat(selectsExecuted() - selects).isEqualTo(1);
	}

	@Test
	void readinessAnswers503WhileTheApplicationRefusesTraffic() {
		// The state Spring Boot keeps until application runners, the warm-up among them, have returned.
		AvailabilityChangeEvent.publish(this.context, ReadinessState.REFUSING_TRAFFIC);
		try {
			Response readiness = management("/actuator/health/readiness");
			assertThat(readiness.status()).isEqualTo(503);
			assertThat(readiness.json().get("status").asString()).isEqualTo("OUT_OF_SERVICE");
			assertThat(management("/actuator/health/liveness").status()).isEqualTo(200);
		}
		finally {
			AvailabilityChangeEvent.publish(this.context, ReadinessState.ACCEPTING_TRAFFIC);
		}
		assertThat(management("/actuator/health/readiness").status()).isEqualTo(200);
	}

	private Map<String, Double> l1Sizes() {
		Map<String, Double> sizes = new TreeMap<>();
		for (String cache : new String[] { "concert", "concert-list", "concert-list-end", "schedules" }) {
			sizes.put(cache, this.meters.get("tiered.cache.size").tags("cache", cache, "tier", "l1").gauge().value());
		}
		return sizes;
	}

	/**
	 * A runner over this application's caches and server with its own bounds; a JIT that never counts as settled,
	 * so that only those bounds end it.
	 */
	private WarmupRunner runner(Duration maxDuration, Duration readyWithin) {
		ApiProperties properties = new ApiProperties();
		properties.getWarmup().setMaxDuration(maxDuration);
		properties.getWarmup().setReadyWithin(readyWithin);
		properties.getWarmup().setQuietCompilation(Duration.ZERO);
		return new WarmupRunner(properties, this.context.getBean(TieredCacheManager.class),
				this.context.getBean(WarmupFilter.class), this.context.getEnvironment(),
				this.context.getBean(RestClient.Builder.class));
	}

}
