package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.dao.DataAccessResourceFailureException;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.TieredCacheMode;
import dev.concertcache.tiered.format.JsonValueCodec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Stale-if-error (ADR 0031): both tiers keep a value {@code stale-if-error} past its time to live and serve it,
 * marked stale and counted, while the loader fails; never an absent result, never after an eviction, never past
 * the window, never for a cache that turns it off. L1 time is a fake ticker, Redis freshness a fake clock.
 */
class TieredCacheStaleIfErrorTests {

	private static final Item OLD = new Item(1, "old");

	private static final Item NEW = new Item(1, "new");

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void expiredValueIsServedStaleFromL1WhenTheLoaderFailsAndCounted() {
		CacheInstance instance = instance(settings());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		instance.ticker.advance(Duration.ofSeconds(11));
		// Redis has lost it as well (evicted for memory, restarted): only this instance's L1 holds the value.
		instance.redis.delete(cache.redisKey(1L));
		assertThat(cache.isInL1(1L)).isFalse();
		assertThat(cache.isStaleInL1(1L)).isTrue();

		Lookup<Item> lookup = cache.lookup(1L, failing());
		assertThat(lookup.value()).contains(OLD);
		assertThat(lookup.stale()).isTrue();
		assertThat(staleServed(instance)).isEqualTo(1);
		assertThat(cache.isStaleInL1(1L)).as("kept to be served again and refreshed on the next read").isTrue();
		assertThat(instance.meters.find("tiered.cache.loads").tags("cache", "items", "result", "failure").timer().count())
			.isEqualTo(1);
	}

	@Test
	void nextReadAfterTheLoaderIsBackGetsTheFreshValueUnmarked() {
		CacheInstance instance = instance(settings());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		instance.ticker.advance(Duration.ofSeconds(11));
		instance.clock.advance(Duration.ofMinutes(2));
		assertThat(cache.lookup(1L, failing()).stale()).isTrue();

		Lookup<Item> lookup = cache.lookup(1L, () -> Optional.of(NEW));
		assertThat(lookup).isEqualTo(Lookup.fresh(Optional.of(NEW), Source.LOADER));
		assertThat(cache.isInL1(1L)).isTrue();
		assertThat(cache.lookup(1L, failing())).isEqualTo(Lookup.fresh(Optional.of(NEW), Source.L1));
		assertThat(staleServed(instance)).isEqualTo(1);
	}

	@Test
	void aValueServedStaleFromTheBytesL1ReadItFromIsL1sOwnInstanceNotADecodedCopy() {
		CacheInstance instance = instance(settings());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		Item held = new Item(1, "old");
		cache.get(1L, () -> Optional.of(held));
		instance.ticker.advance(Duration.ofSeconds(11));
		instance.clock.advance(Duration.ofMinutes(2));

		Lookup<Item> lookup = cache.lookup(1L, failing());
		assertThat(lookup).isEqualTo(Lookup.stale(Optional.of(held), Source.L2));
		assertThat(lookup.value()).get().as("what the application made of it stays valid").isSameAs(held);
	}

	@Test
	void valueRedisKeepsPastItsFreshnessIsServedStaleOnAnInstanceThatNeverHadIt() {
		CacheInstance.Settings properties = settings();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		a.cache("items", Long.class, Item.class).get(1L, () -> Optional.of(OLD));
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		b.clock.advance(Duration.ofMinutes(2));

		Lookup<Item> lookup = onB.lookup(1L, failing());
		assertThat(lookup).isEqualTo(Lookup.stale(Optional.of(OLD), Source.L2));
		assertThat(b.gets("items", "l2", "miss")).as("a stale Redis value is no hit").isEqualTo(1);
		assertThat(staleServed(b)).isEqualTo(1);
		assertThat(onB.isStaleInL1(1L)).as("the next read tries the loader again").isTrue();
	}

	@Test
	void staleValueInRedisIsLoadedAgainUnderTheLockAndReplacedWhenTheLoaderWorks() {
		CacheInstance.Settings properties = settings();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		a.cache("items", Long.class, Item.class).get(1L, () -> Optional.of(OLD));
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		b.clock.advance(Duration.ofMinutes(2));
		CountingLoader loader = new CountingLoader();

		assertThat(onB.lookup(1L, loader.returning(NEW))).isEqualTo(Lookup.fresh(Optional.of(NEW), Source.LOADER));
		assertThat(loader.calls()).isEqualTo(1);
		String stored = b.redis.opsForValue().get(onB.redisKey(1L));
		assertThat(stored).contains("\"name\":\"new\"");
		long freshUntil = Long.parseLong(stored.replaceFirst("^\\{\"v\":1,\"f\":(\\d+),.*$", "$1"));
		assertThat(freshUntil).isGreaterThan(b.clock.millis());
		assertThat(b.redis.getExpire(onB.redisKey(1L), TimeUnit.MILLISECONDS))
			.as("Redis keeps it for the L2 TTL plus the stale window")
			.isGreaterThan(Duration.ofMinutes(1).plus(Duration.ofMinutes(5)).toMillis() - 2_000);
	}

	@Test
	void pastTheStaleWindowTheLoaderFailureReachesTheCaller() {
		CacheInstance instance = instance(settings());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		instance.ticker.advance(Duration.ofSeconds(10).plus(Duration.ofMinutes(5)));
		instance.clock.advance(Duration.ofMinutes(1).plus(Duration.ofMinutes(5)));
		assertThat(cache.isStaleInL1(1L)).isFalse();
		assertThatExceptionOfType(DataAccessResourceFailureException.class)
			.isThrownBy(() -> cache.lookup(1L, failing()));
		assertThat(staleServed(instance)).isZero();
	}

	@Test
	void cacheThatTurnsItOffNeverServesStale() {
		CacheInstance.Settings properties = settings().and((settings) -> settings.withCacheConfiguration("strict",
				settings.cacheDefaults().withStaleIfError(Duration.ZERO)));
		CacheInstance instance = instance(properties);
		CacheUnderTest<Long, Item> strict = instance.cache("strict", Long.class, Item.class);
		strict.get(1L, () -> Optional.of(OLD));
		instance.ticker.advance(Duration.ofSeconds(11));
		assertThat(strict.isStaleInL1(1L)).as("kept one more L1 TTL to be revalidated, never served").isTrue();
		instance.clock.advance(Duration.ofMinutes(2));
		assertThat(instance.redis.getExpire(strict.redisKey(1L), TimeUnit.MILLISECONDS))
			.isLessThanOrEqualTo(Duration.ofMinutes(1).toMillis());
		assertThatExceptionOfType(DataAccessResourceFailureException.class)
			.isThrownBy(() -> strict.lookup(1L, failing()));
		assertThat(staleServed(instance)).isZero();
	}

	@Test
	void absentResultsAreNeverServedStale() {
		CacheInstance instance = instance(settings());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(404L, Optional::empty);
		assertThat(instance.redis.getExpire(cache.redisKey(404L), TimeUnit.MILLISECONDS))
			.as("no stale window in Redis")
			.isLessThanOrEqualTo(5_000);
		instance.ticker.advance(Duration.ofSeconds(6));
		instance.clock.advance(Duration.ofSeconds(6));
		assertThat(cache.isStaleInL1(404L)).isFalse();
		assertThatExceptionOfType(DataAccessResourceFailureException.class)
			.isThrownBy(() -> cache.lookup(404L, failing()));
	}

	@Test
	void evictedValueIsNeverServedStale() {
		CacheInstance.Settings properties = settings();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		onA.get(1L, () -> Optional.of(OLD));
		onB.get(1L, () -> Optional.of(OLD));
		onA.evict(1L);
		await().atMost(Duration.ofSeconds(5)).until(() -> !onB.isInL1(1L) && !onB.isStaleInL1(1L));
		a.ticker.advance(Duration.ofSeconds(11));
		assertThatExceptionOfType(DataAccessResourceFailureException.class)
			.isThrownBy(() -> onA.lookup(1L, failing()));
		assertThatExceptionOfType(DataAccessResourceFailureException.class)
			.isThrownBy(() -> onB.lookup(1L, failing()));
		assertThat(staleServed(a) + staleServed(b)).isZero();
	}

	@Test
	void aValueWhoseKeyRedisHoldsATombstoneForIsNotServedStaleFromL1BeforeTheInvalidationArrives() {
		CacheInstance instance = instance(settings());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		instance.ticker.advance(Duration.ofSeconds(11));
		// Another instance's eviction has landed in Redis; its announcement is not heard here yet.
		instance.redis.opsForValue().set(cache.redisKey(1L), JsonValueCodec.newTombstone());
		assertThat(cache.isStaleInL1(1L)).isTrue();

		assertThatExceptionOfType(DataAccessResourceFailureException.class)
			.isThrownBy(() -> cache.lookup(1L, unreachable()));
		assertThat(staleServed(instance)).isZero();
	}

	@Test
	void concurrentReadersOfAStaleEntryShareOneLoadAndAllGetTheStaleValueWhenItFails() throws Exception {
		CacheInstance instance = instance(settings());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		instance.ticker.advance(Duration.ofSeconds(11));
		instance.clock.advance(Duration.ofMinutes(2));
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger calls = new AtomicInteger();
		Supplier<Optional<Item>> loader = () -> {
			calls.incrementAndGet();
			started.countDown();
			Latches.awaitRelease(release);
			throw new DataAccessResourceFailureException("database down");
		};
		List<Future<Lookup<Item>>> readers = new ArrayList<>();
		readers.add(this.scope.submit(() -> cache.lookup(1L, loader)));
		assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
		for (int i = 0; i < 15; i++) {
			readers.add(this.scope.submit(() -> cache.lookup(1L, loader)));
		}
		await().atMost(Duration.ofSeconds(5)).until(() -> instance.gets("items", "l1", "hit") >= 15);
		release.countDown();
		for (Future<Lookup<Item>> reader : readers) {
			assertThat(reader.get(5, TimeUnit.SECONDS)).extracting(Lookup::value, Lookup::stale)
				.containsExactly(Optional.of(OLD), true);
		}
		assertThat(calls.get()).isEqualTo(1);
		assertThat(staleServed(instance)).isEqualTo(16);
	}

	@Test
	void redisModeServesTheValueRedisKeepsStale() {
		CacheInstance.Settings properties = settings().and((settings) -> settings.mode(TieredCacheMode.REDIS));
		CacheInstance instance = instance(properties);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		instance.clock.advance(Duration.ofMinutes(2));
		assertThat(cache.lookup(1L, failing())).isEqualTo(Lookup.stale(Optional.of(OLD), Source.L2));
		assertThat(cache.lookup(1L, () -> Optional.of(NEW))).isEqualTo(Lookup.fresh(Optional.of(NEW), Source.LOADER));
	}

	/** L1 10 s, L2 1 min, no jitter, the default stale window (5 min). */
	private static CacheInstance.Settings settings() {
		return CacheInstance.properties((settings) -> {
			settings.cacheDefaults(settings.cacheDefaults().withL1Ttl(Duration.ofSeconds(10)));
			settings.cacheDefaults(settings.cacheDefaults().withL2Ttl(Duration.ofMinutes(1)));
			settings.cacheDefaults(settings.cacheDefaults().withJitter(0));
		});
	}

	/** A loader whose database refuses connections, as a killed server does. */
	private static Supplier<Optional<Item>> unreachable() {
		return () -> {
			throw new DataAccessResourceFailureException("database down", new java.net.ConnectException("refused"));
		};
	}

	private static Supplier<Optional<Item>> failing() {
		return () -> {
			throw new DataAccessResourceFailureException("database down");
		};
	}

	private static double staleServed(CacheInstance instance) {
		return instance.count("tiered.cache.stale.served", "cache", "items");
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), properties));
	}

}
