package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.format.JsonValueCodec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The put-after-invalidate race: a load that started before a write must not land in any tier after the
 * write's eviction (ADR 0039). Loaders block on latches; nothing sleeps.
 */
class TieredCacheRaceTests {

	private static final Item OLD = new Item(1, "old");

	private static final Item NEW = new Item(1, "new");

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void caffeineDropsAnInFlightFutureThatIsInvalidatedBeforeItCompletes() {
		AsyncCache<String, String> cache = Caffeine.newBuilder().executor(Runnable::run).buildAsync();
		CompletableFuture<String> one = new CompletableFuture<>();
		CompletableFuture<String> all = new CompletableFuture<>();
		assertThat(cache.get("one", (key, executor) -> one)).isSameAs(one);
		assertThat(cache.get("all", (key, executor) -> all)).isSameAs(all);
		cache.synchronous().invalidate("one");
		cache.synchronous().invalidateAll();
		one.complete("stale");
		all.complete("stale");
		assertThat(cache.getIfPresent("one")).isNull();
		assertThat(cache.getIfPresent("all")).isNull();
		assertThat(cache.synchronous().estimatedSize()).isZero();
	}

	@Test
	void loadThatStartedBeforeAnEvictionOnTheSameInstanceIsStoredInNeitherTier() throws Exception {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance instance = instance(properties);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountDownLatch loading = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Future<Optional<Item>> staleRead = this.scope.submit(() -> cache.get(1L, () -> {
			loading.countDown();
			Latches.awaitRelease(release);
			return Optional.of(OLD);
		}));
		assertThat(loading.await(5, TimeUnit.SECONDS)).isTrue();
		// The write commits and evicts while the load above still holds the old row.
		cache.evict(1L);
		release.countDown();
		assertThat(staleRead.get(5, TimeUnit.SECONDS)).contains(OLD);
		assertThat(cache.isInL1(1L)).isFalse();
		String key = cache.redisKey(1L);
		assertThat(JsonValueCodec.isTombstone(instance.redis.opsForValue().get(key))).isTrue();
		CountingLoader loader = new CountingLoader();
		assertThat(cache.get(1L, loader.returning(NEW))).contains(NEW);
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(instance.redis.opsForValue().get(key)).matches("\\{\"v\":1,\"f\":\\d+,\"r\":\\d+,\"s\":\"[0-9a-f]{8}\",\"d\":\\{\"id\":1,\"name\":\"new\"}}");
	}

	@Test
	void loadThatStartedBeforeAnEvictionOnAnotherInstanceIsStoredInNeitherTier() throws Exception {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CountDownLatch loading = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Future<Optional<Item>> staleRead = this.scope.submit(() -> onA.get(1L, () -> {
			loading.countDown();
			Latches.awaitRelease(release);
			return Optional.of(OLD);
		}));
		assertThat(loading.await(5, TimeUnit.SECONDS)).isTrue();
		b.cache("items", Long.class, Item.class).evict(1L);
		await().atMost(Duration.ofSeconds(2))
			.until(() -> a.count("tiered.cache.invalidations.received", "cache", "items") == 1);
		release.countDown();
		assertThat(staleRead.get(5, TimeUnit.SECONDS)).contains(OLD);
		assertThat(onA.isInL1(1L)).isFalse();
		assertThat(JsonValueCodec.isTombstone(a.redis.opsForValue().get(onA.redisKey(1L))))
			.isTrue();
		CountingLoader loader = new CountingLoader();
		assertThat(onA.get(1L, loader.returning(NEW))).contains(NEW);
		assertThat(b.cache("items", Long.class, Item.class).get(1L, loader.returning(NEW))).contains(NEW);
		assertThat(loader.calls()).isEqualTo(1);
	}

	@Test
	void loadThatReadAfterTheWriteButFinishesAfterAnOlderLoadIsTheValueEveryInstanceServes() throws Exception {
		// A short lock: B stops waiting for A's load lock and loads by itself while A still holds the old row.
		CacheInstance.Settings properties = CacheInstance.properties(
				(settings) -> settings.lockTtl(Duration.ofMillis(200)));
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		CountDownLatch oldRead = new CountDownLatch(1);
		CountDownLatch releaseOld = new CountDownLatch(1);
		Future<Optional<Item>> before = this.scope.submit(() -> onA.get(1L, () -> {
			oldRead.countDown();
			Latches.awaitRelease(releaseOld);
			return Optional.of(OLD);
		}));
		assertThat(oldRead.await(5, TimeUnit.SECONDS)).isTrue();
		onB.evict(1L);
		// B reads after the write (its value is the new one) and is still loading when the old load finishes.
		CountDownLatch newRead = new CountDownLatch(1);
		CountDownLatch releaseNew = new CountDownLatch(1);
		Future<Optional<Item>> after = this.scope.submit(() -> onB.get(1L, () -> {
			newRead.countDown();
			Latches.awaitRelease(releaseNew);
			return Optional.of(NEW);
		}));
		assertThat(newRead.await(5, TimeUnit.SECONDS)).isTrue();
		releaseOld.countDown();
		assertThat(before.get(5, TimeUnit.SECONDS)).contains(OLD);
		releaseNew.countDown();
		assertThat(after.get(5, TimeUnit.SECONDS)).contains(NEW);

		assertThat(a.redis.opsForValue().get(onB.redisKey(1L))).contains("\"name\":\"new\"");
		await().atMost(Duration.ofSeconds(2)).until(() -> !onA.isInL1(1L));
		CountingLoader loader = new CountingLoader();
		assertThat(onA.get(1L, loader.returning(OLD))).contains(NEW);
		assertThat(onB.get(1L, loader.returning(OLD))).contains(NEW);
		assertThat(instance(properties).cache("items", Long.class, Item.class).get(1L, loader.returning(OLD)))
			.contains(NEW);
		assertThat(loader.calls()).isZero();
	}

	@Test
	void listPageLoadThatStartedBeforeAnEvictAllIsStoredOnlyUnderTheOldGeneration() throws Exception {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance instance = instance(properties);
		CacheUnderTest<Long, Item> pages = instance.cache("pages", Long.class, Item.class);
		CountDownLatch loading = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Future<Optional<Item>> staleRead = this.scope.submit(() -> pages.get(0L, () -> {
			loading.countDown();
			Latches.awaitRelease(release);
			return Optional.of(OLD);
		}));
		assertThat(loading.await(5, TimeUnit.SECONDS)).isTrue();
		pages.evictAll();
		release.countDown();
		assertThat(staleRead.get(5, TimeUnit.SECONDS)).contains(OLD);
		assertThat(pages.isInL1(0L)).isFalse();
		CountingLoader loader = new CountingLoader();
		assertThat(pages.get(0L, loader.returning(NEW))).contains(NEW);
		assertThat(loader.calls()).isEqualTo(1);
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), properties));
	}

}
