package dev.concertcache.tiered.support;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.loader.LoadRejectedException;
import dev.concertcache.tiered.loader.LoadRejectedException.Reason;
import dev.concertcache.tiered.loader.LoaderFailures;
import dev.concertcache.tiered.loader.LoaderReachability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The loader guard (ADR 0030): the bulkhead bounds the loads in progress and turns the rest away after a short
 * wait while hits go on; the circuit breaker opens on "unavailable" failures only, rejects misses at once while
 * open (serving stale values where there are any) and closes again by itself; after recovery, concurrent readers
 * of expired keys load each key once.
 */
class TieredCacheLoaderGuardTests {

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void bulkheadBoundsLoadsInProgressAndTurnsTheNextMissAwayQuicklyWhileHitsGoOn() throws Exception {
		CacheInstance instance = instance((configuration) -> configuration.withLoaderBulkhead(
				BulkheadConfig.custom().maxConcurrentCalls(2).maxWaitDuration(Duration.ofMillis(50)).build()));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(100L, () -> Optional.of(new Item(100, "cached")));
		CountDownLatch started = new CountDownLatch(2);
		CountDownLatch release = new CountDownLatch(1);
		List<Future<Optional<Item>>> slow = new ArrayList<>();
		for (long key = 1; key <= 2; key++) {
			long id = key;
			slow.add(this.scope.submit(() -> cache.get(id, () -> {
				started.countDown();
				Latches.awaitRelease(release);
				return Optional.of(new Item(id, "slow"));
			})));
		}
		assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
		assertThat(ManagerInternals.loaderBulkhead(instance.manager, "items").getMetrics().getAvailableConcurrentCalls())
			.isZero();

		long before = System.nanoTime();
		CountingLoader third = new CountingLoader();
		assertThatExceptionOfType(LoadRejectedException.class)
			.isThrownBy(() -> cache.get(3L, third.returning(new Item(3, "three"))))
			.satisfies((ex) -> {
				assertThat(ex.getReason()).isEqualTo(Reason.BULKHEAD_FULL);
				assertThat(ex.getRetryAfter()).isEqualTo(Duration.ofSeconds(1));
			});
		long rejectedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before);
		assertThat(rejectedAfterMillis).as("max-wait is 50 ms; generous bound").isLessThan(1_000);
		assertThat(third.calls()).isZero();
		assertThat(instance.count("tiered.cache.loads.rejected", "cache", "items", "reason", "bulkhead-full"))
			.isEqualTo(1);

		long hitStarted = System.nanoTime();
		assertThat(cache.get(100L, new CountingLoader().returning(null))).contains(new Item(100, "cached"));
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - hitStarted)).as("a hit does not queue")
			.isLessThan(50);

		release.countDown();
		for (Future<Optional<Item>> load : slow) {
			assertThat(load.get(5, TimeUnit.SECONDS)).isPresent();
		}
		assertThat(cache.get(3L, third.returning(new Item(3, "three")))).contains(new Item(3, "three"));
	}

	@Test
	void circuitOpensOnUnavailableFailuresRejectsMissesAtOnceAndClosesWhenTheLoaderIsBack() {
		CacheInstance instance = instance(this::smallBreaker);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CircuitBreaker breaker = ManagerInternals.loaderGuard(instance.manager, "items").breaker();
		AtomicInteger calls = new AtomicInteger();
		Supplier<Optional<Item>> down = () -> {
			calls.incrementAndGet();
			throw new DataAccessResourceFailureException("database down");
		};
		for (long key = 1; key <= 4; key++) {
			long id = key;
			assertThatExceptionOfType(DataAccessResourceFailureException.class).isThrownBy(() -> cache.get(id, down));
		}
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);

		long before = System.nanoTime();
		assertThatExceptionOfType(LoadRejectedException.class).isThrownBy(() -> cache.get(5L, down))
			.satisfies((ex) -> {
				assertThat(ex.getReason()).isEqualTo(Reason.CIRCUIT_OPEN);
				assertThat(ex.getRetryAfter()).isEqualTo(Duration.ofMillis(300));
				assertThat(LoaderFailures.isUnavailable(ex)).isTrue();
			});
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before)).isLessThan(100);
		assertThat(calls.get()).isEqualTo(4);
		assertThat(instance.count("tiered.cache.loads.rejected", "cache", "items", "reason", "circuit-open"))
			.isEqualTo(1);

		await().atMost(Duration.ofSeconds(5))
			.until(() -> breaker.getState() == CircuitBreaker.State.HALF_OPEN);
		for (long key = 5; key <= 6; key++) {
			long id = key;
			assertThat(cache.get(id, () -> Optional.of(new Item(id, "back")))).isPresent();
		}
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
	}

	@Test
	void whileTheLastLoadCouldNotReachTheDatabaseOneLoadTriesItAndTheOthersAreRejectedAtOnce() throws Exception {
		CacheInstance instance = instance(UnaryOperator.identity());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThatExceptionOfType(CannotGetJdbcConnectionException.class)
			.isThrownBy(() -> cache.get(1L, new CountingLoader().unreachable()));
		CountDownLatch release = new CountDownLatch(1);
		Future<Optional<Item>> probe = parkedTrial(cache, 2L, release);
		CountingLoader other = new CountingLoader();

		assertThatExceptionOfType(LoadRejectedException.class)
			.isThrownBy(() -> cache.get(3L, other.returning(new Item(3, "three"))))
			.satisfies((ex) -> {
				assertThat(ex.getReason()).isEqualTo(Reason.UNREACHABLE);
				assertThat(LoaderFailures.isUnreachable(ex)).isTrue();
			});
		assertThat(other.calls()).isZero();
		assertThat(instance.count("tiered.cache.loads.rejected", "cache", "items", "reason", "unreachable"))
			.isEqualTo(1);
		release.countDown();
		assertThat(probe.get(5, TimeUnit.SECONDS)).contains(new Item(2, "back"));
		assertThat(cache.get(3L, other.returning(new Item(3, "three")))).contains(new Item(3, "three"));
		assertThat(other.calls()).isEqualTo(1);
	}

	@Test
	void aLoadOfOneCacheThatCouldNotReachTheDatabaseMakesTheOtherCachesTryItOneLoadAtATime() throws Exception {
		CacheInstance instance = instance(UnaryOperator.identity());
		CacheUnderTest<Long, Item> items = instance.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> pages = instance.cache("pages", Long.class, Item.class);
		assertThatExceptionOfType(CannotGetJdbcConnectionException.class)
			.isThrownBy(() -> items.get(1L, new CountingLoader().unreachable()));
		CountDownLatch release = new CountDownLatch(1);
		Future<Optional<Item>> trial = parkedTrial(pages, 2L, release);
		CountingLoader other = new CountingLoader();

		assertThatExceptionOfType(LoadRejectedException.class)
			.isThrownBy(() -> pages.get(3L, other.returning(new Item(3, "three"))))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(Reason.UNREACHABLE));
		assertThat(other.calls()).isZero();
		release.countDown();
		assertThat(trial.get(5, TimeUnit.SECONDS)).contains(new Item(2, "back"));
	}

	@Test
	void aConnectionToTheDatabaseRefusedOutsideTheCachesMakesLoadsTryItOneAtATimeUntilOneSucceeds() throws Exception {
		LoaderReachability reachability = new LoaderReachability();
		CacheInstance instance = this.scope.closeAfter(CacheInstance.start(RedisServer.shared(),
				CacheInstance.properties((settings) -> settings.loaderReachability(reachability))));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		reachability.connectionFailed(new IOException("Failed to connect to MySQL", new ConnectException("refused")));
		CountDownLatch release = new CountDownLatch(1);
		Future<Optional<Item>> trial = parkedTrial(cache, 1L, release);
		CountingLoader other = new CountingLoader();

		assertThatExceptionOfType(LoadRejectedException.class)
			.isThrownBy(() -> cache.get(2L, other.returning(new Item(2, "two"))))
			.satisfies((ex) -> assertThat(LoaderFailures.isUnreachable(ex)).isTrue());
		assertThat(other.calls()).isZero();
		release.countDown();
		assertThat(trial.get(5, TimeUnit.SECONDS)).contains(new Item(1, "back"));
		assertThat(reachability.lastUnreachable()).isNull();
		assertThat(cache.get(2L, other.returning(new Item(2, "two")))).contains(new Item(2, "two"));
		assertThat(other.calls()).isEqualTo(1);
	}

	@Test
	void aConnectionFailureThatDoesNotSayTheDatabaseIsOutOfReachChangesNothing() {
		LoaderReachability reachability = new LoaderReachability();

		reachability.connectionFailed(new IOException("the stream ended"));

		assertThat(reachability.lastUnreachable()).isNull();
	}

	@Test
	void aLoadThatReachesTheDatabaseAgainLetsTheBreakersOfTheOtherCachesTryItAtOnce() {
		CacheInstance instance = instance(UnaryOperator.identity());
		CacheUnderTest<Long, Item> items = instance.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> pages = instance.cache("pages", Long.class, Item.class);
		assertThatExceptionOfType(CannotGetJdbcConnectionException.class)
			.isThrownBy(() -> items.get(1L, new CountingLoader().unreachable()));
		CircuitBreaker pagesBreaker = ManagerInternals.loaderGuard(instance.manager, "pages").breaker();
		pagesBreaker.transitionToOpenState();

		assertThat(items.get(2L, () -> Optional.of(new Item(2, "back")))).contains(new Item(2, "back"));

		assertThat(pagesBreaker.getState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
		assertThat(pages.get(3L, () -> Optional.of(new Item(3, "three")))).contains(new Item(3, "three"));
		assertThat(pagesBreaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
	}

	@Test
	void oneSuccessfulTrialLoadClosesTheDefaultBreaker() {
		CacheInstance instance = instance(UnaryOperator.identity());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CircuitBreaker breaker = ManagerInternals.loaderGuard(instance.manager, "items").breaker();
		breaker.transitionToOpenState();
		breaker.transitionToHalfOpenState();

		assertThat(cache.get(1L, () -> Optional.of(new Item(1, "back")))).contains(new Item(1, "back"));

		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
	}

	@Test
	void otherLoaderFailuresLeaveTheCircuitClosed() {
		CacheInstance instance = instance(this::smallBreaker);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		for (long key = 1; key <= 8; key++) {
			long id = key;
			assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> cache.get(id, () -> {
				throw new IllegalStateException("a bug, not an outage");
			}));
		}
		assertThat(ManagerInternals.loaderGuard(instance.manager, "items").breaker().getState())
			.isEqualTo(CircuitBreaker.State.CLOSED);
	}

	@Test
	void whileTheCircuitIsOpenExpiredValuesAreServedStaleWithoutCallingTheLoader() {
		CacheInstance instance = instance(this::smallBreaker);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(new Item(1, "one")));
		// Forced: an open breaker turns half-open after its wait on the wall clock, which a loaded machine can pass.
		ManagerInternals.loaderGuard(instance.manager, "items").breaker().transitionToForcedOpenState();
		instance.ticker.advance(Duration.ofMinutes(1));
		instance.clock.advance(Duration.ofMinutes(12));
		CountingLoader loader = new CountingLoader();
		for (int i = 0; i < 3; i++) {
			assertThat(cache.lookup(1L, loader.returning(new Item(1, "changed"))))
				.isEqualTo(Lookup.stale(Optional.of(new Item(1, "one")), Source.L2));
		}
		assertThat(loader.calls()).isZero();
		assertThat(instance.count("tiered.cache.stale.served", "cache", "items")).isEqualTo(3);
	}

	@Test
	void afterRecoveryConcurrentReadersOfExpiredKeysLoadEachKeyOnce() throws Exception {
		CacheInstance instance = instance(this::smallBreaker);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		int keys = 8;
		int readers = 32;
		for (long key = 0; key < keys; key++) {
			long id = key;
			cache.get(id, () -> Optional.of(new Item(id, "before")));
		}
		// Everything expired in both tiers during the outage.
		instance.ticker.advance(Duration.ofMinutes(1));
		instance.clock.advance(Duration.ofMinutes(12));
		AtomicInteger loads = new AtomicInteger();
		CountDownLatch go = new CountDownLatch(1);
		List<Future<List<Optional<Item>>>> results = new ArrayList<>();
		for (int reader = 0; reader < readers; reader++) {
			results.add(this.scope.submit(() -> {
				Latches.awaitRelease(go);
				List<Optional<Item>> read = new ArrayList<>();
				for (long key = 0; key < keys; key++) {
					long id = key;
					read.add(cache.get(id, () -> {
						loads.incrementAndGet();
						return Optional.of(new Item(id, "after"));
					}));
				}
				return read;
			}));
		}
		go.countDown();
		for (Future<List<Optional<Item>>> result : results) {
			List<Optional<Item>> read = result.get(10, TimeUnit.SECONDS);
			for (int key = 0; key < keys; key++) {
				assertThat(read.get(key)).as("key %d", key).contains(new Item(key, "after"));
			}
		}
		// Exactly once: none served as fresh from the expired entries, none loaded twice.
		assertThat(loads.get()).as("%d readers of %d expired keys", readers, keys).isEqualTo(keys);
	}

	@Test
	void aSlowAndThenFailingLoaderOfOneCacheLeavesAnotherCachesMissesLoading() throws Exception {
		CacheInstance instance = instance((configuration) -> smallBreaker(configuration)
			.withLoaderBulkhead(BulkheadConfig.custom().maxConcurrentCalls(1).maxWaitDuration(Duration.ZERO).build()));
		CacheUnderTest<Long, Item> pages = instance.cache("pages", Long.class, Item.class);
		CacheUnderTest<Long, Item> items = instance.cache("items", Long.class, Item.class);
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Future<Optional<Item>> slow = this.scope.submit(() -> pages.get(1L, () -> {
			started.countDown();
			Latches.awaitRelease(release);
			return Optional.of(new Item(1, "page"));
		}));
		assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
		assertThatExceptionOfType(LoadRejectedException.class)
			.isThrownBy(() -> pages.get(2L, () -> Optional.of(new Item(2, "page"))))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(Reason.BULKHEAD_FULL));
		CountingLoader loader = new CountingLoader();
		assertThat(items.get(1L, loader.returning(new Item(1, "item")))).as("while a page load holds its slot")
			.contains(new Item(1, "item"));
		release.countDown();
		assertThat(slow.get(5, TimeUnit.SECONDS)).isPresent();

		for (long key = 10; key < 13; key++) {
			long id = key;
			assertThatExceptionOfType(DataAccessResourceFailureException.class).isThrownBy(() -> pages.get(id, () -> {
				throw new DataAccessResourceFailureException("list query times out");
			}));
		}
		assertThat(ManagerInternals.loaderGuard(instance.manager, "pages").breaker().getState())
			.isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(items.get(2L, loader.returning(new Item(2, "item")))).as("while the pages' breaker is open")
			.contains(new Item(2, "item"));
		assertThat(loader.calls()).isEqualTo(2);
		assertThat(ManagerInternals.loaderGuard(instance.manager, "items").breaker().getState())
			.isEqualTo(CircuitBreaker.State.CLOSED);
	}

	private TieredCacheConfiguration smallBreaker(TieredCacheConfiguration configuration) {
		return configuration.withLoaderCircuitBreaker(CircuitBreakerConfig.from(configuration.loaderCircuitBreaker())
			.minimumNumberOfCalls(4)
			.slidingWindowSize(4)
			.permittedNumberOfCallsInHalfOpenState(2)
			.waitDurationInOpenState(Duration.ofMillis(300))
			.build());
	}

	/** A load of {@code key} that has reached its loader and waits there for {@code release}. */
	private Future<Optional<Item>> parkedTrial(CacheUnderTest<Long, Item> cache, long key, CountDownLatch release)
			throws InterruptedException {
		CountDownLatch trying = new CountDownLatch(1);
		Future<Optional<Item>> trial = this.scope.submit(() -> cache.get(key, () -> {
			trying.countDown();
			Latches.awaitRelease(release);
			return Optional.of(new Item(key, "back"));
		}));
		assertThat(trying.await(5, TimeUnit.SECONDS)).isTrue();
		return trial;
	}

	private CacheInstance instance(UnaryOperator<TieredCacheConfiguration> loader) {
		CacheInstance instance = CacheInstance.start(RedisServer.shared(), CacheInstance.properties((settings) -> {
			settings.cacheDefaults(loader.apply(settings.cacheDefaults()
				.withL1Ttl(Duration.ofSeconds(30))
				.withL2Ttl(Duration.ofMinutes(10))));
		}));
		this.scope.closeAfter(instance);
		return instance;
	}

}
