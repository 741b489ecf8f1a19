package dev.concertcache.tiered.support;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessResourceFailureException;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheMode;
import dev.concertcache.tiered.autoconfigure.TieredCacheAutoConfiguration;
import dev.concertcache.tiered.autoconfigure.TieredCacheManagerCustomizer;
import dev.concertcache.tiered.hotset.HotSetConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The auto-configuration: which manager each mode gets, back-off, start-up validation, meter names as
 * Prometheus shows them, and two application contexts sharing one Redis.
 */
class TieredCacheAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, TieredCacheAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + RedisServer.shared().port(),
				"spring.data.redis.timeout=250ms", "tiered-cache.key-prefix=test-" + UUID.randomUUID());

	@Test
	void withoutAModeEveryReadCallsTheLoader() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(TieredCacheManager.class).hasSingleBean(PassThroughCacheManager.class);
			TieredCache<Long, Item> cache = context.getBean(TieredCacheManager.class)
				.getCache("items", Long.class, Item.class);
			CountingLoader loader = new CountingLoader();
			cache.get(1L, loader.returning(new Item(1, "one")));
			cache.get(1L, loader.returning(new Item(1, "one")));
			assertThat(loader.calls()).isEqualTo(2);
		});
	}

	@Test
	void tieredModeGivesATwoTierManagerOverTheRedisConnectionFactory() {
		this.contextRunner.withPropertyValues("tiered-cache.mode=tiered").run((context) -> {
			assertThat(context).hasSingleBean(DefaultTieredCacheManager.class);
			assertThat(context.getBean(DefaultTieredCacheManager.class).getMode())
				.isEqualTo(TieredCacheMode.TIERED);
		});
	}

	@Test
	void redisModeGivesARedisOnlyManager() {
		this.contextRunner.withPropertyValues("tiered-cache.mode=redis")
			.run((context) -> assertThat(context.getBean(DefaultTieredCacheManager.class).getMode())
				.isEqualTo(TieredCacheMode.REDIS));
	}

	@Test
	void applicationManagerWins() {
		this.contextRunner.withPropertyValues("tiered-cache.mode=tiered")
			.withUserConfiguration(OwnManagerConfiguration.class)
			.run((context) -> assertThat(context).hasSingleBean(TieredCacheManager.class)
				.getBean(TieredCacheManager.class)
				.isSameAs(context.getBean("ownManager")));
	}

	@Test
	void l1TtlNotShorterThanL2TtlFailsStartUpNamingBothProperties() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.caches.concert.l1-ttl=10m",
					"tiered-cache.caches.concert.l2-ttl=5m")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("tiered-cache.caches.concert.l1-ttl (PT10M) must be shorter than "
						+ "tiered-cache.caches.concert.l2-ttl (PT5M)"));
	}

	@Test
	void jitterOutOfRangeFailsStartUp() {
		this.contextRunner.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.defaults.jitter=0.9")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("tiered-cache.defaults.jitter must be between 0 and 0.5"));
	}

	@Test
	void refreshAheadOutOfRangeFailsStartUp() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.caches.concert.l1-refresh-ahead=0.8")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("tiered-cache.caches.concert.l1-refresh-ahead must be between 0 and 0.5"));
	}

	@Test
	void refreshAheadSetForOneCacheReachesThatCacheOnly() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.caches.concert.l1-refresh-ahead=0")
			.run((context) -> {
				DefaultTieredCacheManager manager = context.getBean(DefaultTieredCacheManager.class);
				assertThat(ManagerInternals.spec(manager, "concert").l1RefreshAhead()).isZero();
				assertThat(ManagerInternals.spec(manager, "schedules").l1RefreshAhead())
					.isEqualTo(TieredCacheConfiguration.DEFAULT_L1_REFRESH_AHEAD);
			});
	}

	@Test
	void perCacheOverridesKeepTheDefaultsTheyDoNotSet() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.defaults.l2-ttl=20m",
					"tiered-cache.caches.concert.l1-ttl=5s", "tiered-cache.caches.concert.jitter=0")
			.run((context) -> {
				TieredCacheConfiguration spec = ManagerInternals.spec(context.getBean(DefaultTieredCacheManager.class), "concert");
				assertThat(spec).usingRecursiveComparison()
					.comparingOnlyFields("l1Ttl", "l2Ttl", "absentTtl", "l1MaximumSize", "jitter", "staleIfError")
					.isEqualTo(TieredCacheConfiguration.defaultConfig()
						.withL1Ttl(Duration.ofSeconds(5))
						.withL2Ttl(Duration.ofMinutes(20))
						.withJitter(0));
			});
	}

	@Test
	void hotSetPropertiesReachTheCoreAndUnsetOnesKeepTheirDefaults() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.hot-set.publish-interval=10s",
					"tiered-cache.hot-set.size=250")
			.run((context) -> assertThat(
					ManagerInternals.hotSetConfiguration(context.getBean(DefaultTieredCacheManager.class)))
				.isEqualTo(HotSetConfiguration.defaultConfig()
					.withPublishInterval(Duration.ofSeconds(10))
					.withSize(250)
					.withFillTimeout(HotSetConfiguration.DEFAULT_FILL_TIMEOUT)));
		this.contextRunner.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.hot-set.fill-timeout=750ms")
			.run((context) -> assertThat(
					ManagerInternals.hotSetConfiguration(context.getBean(DefaultTieredCacheManager.class)))
				.isEqualTo(HotSetConfiguration.defaultConfig().withFillTimeout(Duration.ofMillis(750))));
	}

	@Test
	void aZeroHotSetPublishIntervalFailsStartUpNamingTheProperty() {
		this.contextRunner.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.hot-set.publish-interval=0s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("tiered-cache.hot-set.publish-interval must be positive"));
	}

	@Test
	void circuitBreakersAndBulkheadGoIntoTheApplicationsRegistriesWhenItHasThem() {
		this.contextRunner.withPropertyValues("tiered-cache.mode=tiered")
			.withBean(CircuitBreakerRegistry.class, CircuitBreakerRegistry::ofDefaults)
			.withBean(BulkheadRegistry.class, BulkheadRegistry::ofDefaults)
			.run((context) -> {
				context.getBean(TieredCacheManager.class).getCache("items", Long.class, Item.class);
				CircuitBreakerRegistry breakers = context.getBean(CircuitBreakerRegistry.class);
				assertThat(breakers.find(DefaultTieredCacheManager.CIRCUIT_BREAKER_NAME)).isPresent();
				assertThat(breakers.find("tiered-cache-loader-items")).isPresent();
				assertThat(context.getBean(BulkheadRegistry.class).find("tiered-cache-loader-items")).isPresent();
			});
	}

	@Test
	void loaderGuardSettingsApply() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.loader.bulkhead.max-concurrent-calls=4",
					"tiered-cache.loader.bulkhead.max-wait=10ms", "tiered-cache.loader.circuit-breaker.enabled=false")
			.run((context) -> {
				DefaultTieredCacheManager manager = context.getBean(DefaultTieredCacheManager.class);
				Bulkhead bulkhead = ManagerInternals.loaderBulkhead(manager, "items");
				assertThat(bulkhead.getBulkheadConfig().getMaxConcurrentCalls()).isEqualTo(4);
				assertThat(bulkhead.getBulkheadConfig().getMaxWaitDuration()).isEqualTo(Duration.ofMillis(10));
				assertThat(ManagerInternals.loaderGuard(manager, "items").breaker()).isNull();
			});
	}

	@Test
	void resilience4jInstanceKeysWinOverTheTieredCacheDefaultsForThatCachesGuardOnly() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered",
					"tiered-cache.loader.circuit-breaker.wait-duration-in-open-state=7s",
					"resilience4j.circuitbreaker.instances.tiered-cache-loader-concert.sliding-window-size=2",
					"resilience4j.circuitbreaker.instances.tiered-cache-loader-concert.minimum-number-of-calls=2",
					"resilience4j.bulkhead.instances.tiered-cache-loader-concert.max-concurrent-calls=3")
			.run((context) -> {
				DefaultTieredCacheManager manager = context.getBean(DefaultTieredCacheManager.class);
				TieredCache<Long, Item> concert = manager.getCache("concert", Long.class, Item.class);
				TieredCache<Long, Item> items = manager.getCache("items", Long.class, Item.class);
				for (long id = 1; id <= 2; id++) {
					long key = id;
					assertThatExceptionOfType(DataAccessResourceFailureException.class)
						.isThrownBy(() -> concert.get(key, () -> {
							throw new DataAccessResourceFailureException("database down");
						}));
					assertThatExceptionOfType(DataAccessResourceFailureException.class)
						.isThrownBy(() -> items.get(key, () -> {
							throw new DataAccessResourceFailureException("database down");
						}));
				}
				CircuitBreaker concertBreaker = manager.getLoaderCircuitBreaker("concert").orElseThrow();
				assertThat(concertBreaker.getState()).as("two failures fill its window of 2")
					.isEqualTo(CircuitBreaker.State.OPEN);
				assertThat(concertBreaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1))
					.as("what the instance does not set comes from tiered-cache.*")
					.isEqualTo(7000);
				assertThat(manager.getLoaderCircuitBreaker("items").orElseThrow().getState())
					.as("the default window of 20 needs 10 calls")
					.isEqualTo(CircuitBreaker.State.CLOSED);
				assertThat(ManagerInternals.loaderBulkhead(manager, "concert").getBulkheadConfig().getMaxConcurrentCalls())
					.isEqualTo(3);
				assertThat(ManagerInternals.loaderBulkhead(manager, "items").getBulkheadConfig().getMaxConcurrentCalls())
					.isEqualTo(16);
			});
	}

	@Test
	void aResilience4jBaseConfigOfTheInstanceWinsOverTieredCacheAndLosesToTheInstance() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.loader.circuit-breaker.failure-rate-threshold=90",
					"resilience4j.circuitbreaker.configs.strict.failure-rate-threshold=10",
					"resilience4j.circuitbreaker.configs.strict.sliding-window-size=50",
					"resilience4j.circuitbreaker.instances.tiered-cache-loader-schedules.base-config=strict",
					"resilience4j.circuitbreaker.instances.tiered-cache-loader-schedules.sliding-window-size=5")
			.run((context) -> {
				CircuitBreakerConfig config = context.getBean(DefaultTieredCacheManager.class)
					.getLoaderCircuitBreaker("schedules")
					.orElseThrow()
					.getCircuitBreakerConfig();
				assertThat(config.getFailureRateThreshold()).isEqualTo(10);
				assertThat(config.getSlidingWindowSize()).isEqualTo(5);
				assertThat(config.getWaitIntervalFunctionInOpenState().apply(1)).isEqualTo(1000);
			});
	}

	@Test
	void resilience4jInstanceKeysApplyToTheRedisBreaker() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered",
					"resilience4j.circuitbreaker.instances.tiered-cache-redis.slow-call-duration-threshold=50ms")
			.run((context) -> assertThat(ManagerInternals.circuitBreaker(context.getBean(DefaultTieredCacheManager.class))
				.getCircuitBreakerConfig()
				.getSlowCallDurationThreshold()).isEqualTo(Duration.ofMillis(50)));
	}

	@Test
	void negativeStaleIfErrorFailsStartUp() {
		this.contextRunner
			.withPropertyValues("tiered-cache.mode=tiered", "tiered-cache.caches.schedules.stale-if-error=-1s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("tiered-cache.caches.schedules.stale-if-error must be zero (off) or positive"));
	}

	@Test
	void metersAppearInPrometheusUnderTheContractsNames() {
		this.contextRunner.withPropertyValues("tiered-cache.mode=tiered")
			.withBean(PrometheusMeterRegistry.class, () -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
			.run((context) -> {
				TieredCache<Long, Item> cache = context.getBean(TieredCacheManager.class)
					.getCache("concert", Long.class, Item.class);
				cache.get(1L, new CountingLoader().returning(new Item(1, "one")));
				cache.get(1L, new CountingLoader().returning(new Item(1, "one")));
				cache.evict(1L);
				String scrape = context.getBean(PrometheusMeterRegistry.class).scrape();
				assertThat(scrape).contains("tiered_cache_gets_total{cache=\"concert\",result=\"hit\",tier=\"l1\"} 1.0")
					.contains("tiered_cache_gets_total{cache=\"concert\",result=\"miss\",tier=\"l1\"} 1.0")
					.contains("tiered_cache_gets_total{cache=\"concert\",result=\"miss\",tier=\"l2\"} 1.0")
					.contains("tiered_cache_loads_seconds_count{cache=\"concert\",result=\"success\"} 1")
					.contains("tiered_cache_loads_seconds_bucket{cache=\"concert\",result=\"success\",le=")
					.contains("tiered_cache_evictions_total{cache=\"concert\",cause=\"explicit\",tier=\"l1\"} 1.0")
					.contains("tiered_cache_evictions_total{cache=\"concert\",cause=\"explicit\",tier=\"l2\"} 1.0")
					.contains("tiered_cache_invalidations_sent_total{cache=\"concert\"} 1.0")
					.contains("tiered_cache_invalidations_received_total{cache=\"concert\"} 0.0")
					.contains("tiered_cache_invalidation_lag_seconds_bucket{le=")
					.contains("tiered_cache_invalidation_lag_seconds_max")
					.contains("tiered_cache_stale_served_total{cache=\"concert\"} 0.0")
					.contains("tiered_cache_size{cache=\"concert\",tier=\"l1\"} 0.0")
					.contains("tiered_cache_pending_evictions 0.0")
					.contains("resilience4j_circuitbreaker_state{name=\"tiered-cache-redis\",state=\"closed\"} 1.0")
					.contains("tiered_cache_loads_rejected_total{cache=\"concert\",reason=\"bulkhead-full\"} 0.0")
					.contains("tiered_cache_loads_rejected_total{cache=\"concert\",reason=\"circuit-open\"} 0.0")
					.contains("resilience4j_circuitbreaker_state{name=\"tiered-cache-loader-concert\",state=\"closed\"} 1.0")
					.contains("resilience4j_bulkhead_available_concurrent_calls{name=\"tiered-cache-loader-concert\"} 16.0")
					.contains("resilience4j_bulkhead_max_allowed_concurrent_calls{name=\"tiered-cache-loader-concert\"} 16.0");
			});
	}

	@Test
	void twoApplicationContextsSharingOneRedisSeeEachOthersEvictionsWithinMilliseconds() {
		ApplicationContextRunner tiered = this.contextRunner.withPropertyValues("tiered-cache.mode=tiered");
		tiered.run((a) -> tiered.run((b) -> {
			DefaultTieredCacheManager onA = a.getBean(DefaultTieredCacheManager.class);
			DefaultTieredCacheManager onB = b.getBean(DefaultTieredCacheManager.class);
			org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
				.until(() -> onA.isListening() && onB.isListening());
			CacheUnderTest<Long, Item> itemsOnA = new CacheUnderTest<>(onA.getCache("items",
					Long.class, Item.class), ManagerInternals.core(onA, "items"));
			CacheUnderTest<Long, Item> itemsOnB = new CacheUnderTest<>(onB.getCache("items",
					Long.class, Item.class), ManagerInternals.core(onB, "items"));
			int rounds = 200;
			long[] lags = new long[rounds];
			for (int i = 0; i < rounds; i++) {
				long key = i;
				itemsOnB.get(key, () -> Optional.of(new Item(key, "v")));
				long sent = System.nanoTime();
				itemsOnA.evict(key);
				long deadline = sent + TimeUnit.SECONDS.toNanos(2);
				while (itemsOnB.isInL1(key) && System.nanoTime() < deadline) {
					LockSupport.parkNanos(50_000);
				}
				lags[i] = System.nanoTime() - sent;
			}
			Arrays.sort(lags);
			double p99 = lags[(int) Math.ceil(rounds * 0.99) - 1] / 1e6;
			System.out.printf("Two application contexts, %d evictions: p50 %.2f ms, p99 %.2f ms, max %.2f ms%n", rounds,
					lags[rounds / 2] / 1e6, p99, lags[rounds - 1] / 1e6);
			assertThat(p99).isLessThan(100);
		}));
	}

	@Test
	void customizersShapeTheManagerBeforeItIsBuilt() {
		java.time.Clock clock = java.time.Clock.fixed(java.time.Instant.parse("2026-01-01T00:00:00Z"),
				java.time.ZoneOffset.UTC);
		this.contextRunner.withPropertyValues("tiered-cache.mode=tiered")
			.withBean(TieredCacheManagerCustomizer.class, () -> (builder) -> builder.clock(clock))
			.run((context) -> assertThat(ManagerInternals.clock(context.getBean(DefaultTieredCacheManager.class)))
				.isSameAs(clock));
	}

	@Test
	void configurationMetadataDescribesEveryProperty() throws Exception {
		try (InputStream metadata = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(metadata).isNotNull();
			String json = new String(metadata.readAllBytes(), StandardCharsets.UTF_8);
			assertThat(json).contains("\"name\": \"tiered-cache.mode\"")
				.contains("\"name\": \"tiered-cache.defaults.l1-ttl\"")
				.contains("\"name\": \"tiered-cache.caches\"")
				.contains("\"name\": \"tiered-cache.circuit-breaker.wait-duration-in-open-state\"")
				.contains("\"name\": \"tiered-cache.defaults.stale-if-error\"")
				.contains("\"name\": \"tiered-cache.loader.bulkhead.max-concurrent-calls\"")
				.contains("\"name\": \"tiered-cache.loader.bulkhead.max-wait\"")
				.contains("\"name\": \"tiered-cache.loader.circuit-breaker.enabled\"")
				.contains("Time an entry stays in the in-process tier; shorter than l2-ttl");
		}
	}

	@Test
	void configurationMetadataHintsNoCacheNamesSinceTheyAreTheApplicationsOwn() throws Exception {
		try (InputStream metadata = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(metadata).isNotNull();
			String json = new String(metadata.readAllBytes(), StandardCharsets.UTF_8);
			assertThat(json).doesNotContain("\"name\": \"tiered-cache.caches.keys\"")
				.doesNotContain("concert-list")
				.contains("\"name\": \"tiered-cache.mode\"");
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnManagerConfiguration {

		@Bean
		TieredCacheManager ownManager() {
			return new PassThroughCacheManager();
		}

	}

}
