package dev.concertcache.tiered.support;

import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCacheWarmup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A warm-up runs the real read path (both tiers and the loader) and leaves the caches as cold as it found them:
 * shown with the loader's calls, the tier counters and the keys in a real Redis.
 */
class TieredCacheWarmupTests {

	@RegisterExtension
	final TestScope scope = new TestScope();

	private final CacheInstance.Settings properties = CacheInstance.properties();

	@Test
	void readsInsideAWarmupGoThroughBothTiersAndTheLoaderOfATwin() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		try (TieredCacheWarmup warmup = instance.manager.openWarmup()) {
			try (TieredCacheWarmup.Scope scope = warmup.enter()) {
				assertThat(cache.get(1L, loader.returning(new Item(1, "one")))).contains(new Item(1, "one"));
				assertThat(cache.get(1L, loader.returning(new Item(1, "other")))).contains(new Item(1, "one"));
				assertThat(keys(instance)).isNotEmpty().allMatch((key) -> key.contains(":warmup:"));
			}
		}
		assertThat(loader.calls()).isEqualTo(1);
	}

	@Test
	void theFirstRealReadAfterAWarmupIsAMissInBothTiers() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		try (TieredCacheWarmup warmup = instance.manager.openWarmup();
				TieredCacheWarmup.Scope scope = warmup.enter()) {
			cache.get(1L, loader.returning(new Item(1, "warm-up")));
			cache.get(1L, loader.returning(new Item(1, "warm-up")));
		}
		assertThat(cache.get(1L, loader.returning(new Item(1, "real")))).contains(new Item(1, "real"));
		assertThat(loader.calls()).isEqualTo(2);
		assertThat(instance.gets("items", "l1", "miss")).isEqualTo(1);
		assertThat(instance.gets("items", "l1", "hit")).isZero();
		assertThat(instance.gets("items", "l2", "miss")).isEqualTo(1);
		assertThat(instance.loads("items")).isEqualTo(1);
	}

	@Test
	void closingAWarmupDeletesItsRedisKeysAndNoOthers() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		cache.get(1L, loader.returning(new Item(1, "real")));
		Set<String> before = keys(instance);
		TieredCacheWarmup warmup = instance.manager.openWarmup();
		try (TieredCacheWarmup.Scope scope = warmup.enter()) {
			for (long id = 1; id <= 50; id++) {
				cache.get(id, loader.returning(new Item(id, "warm-up")));
			}
			cache.evictAll();
		}
		assertThat(keys(instance)).hasSizeGreaterThan(before.size() + 50);
		warmup.close();
		assertThat(keys(instance)).isEqualTo(before);
		assertThat(cache.get(1L, loader.returning(new Item(1, "other")))).contains(new Item(1, "real"));
	}

	@Test
	void aWarmupCooledInL1ReadsItsTwinsFromRedisAgain() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		try (TieredCacheWarmup warmup = instance.manager.openWarmup();
				TieredCacheWarmup.Scope scope = warmup.enter()) {
			cache.get(1L, loader.returning(new Item(1, "first")));
			warmup.cool(false);
			// Redis keeps the twin's value: read from there, not loaded.
			assertThat(cache.get(1L, loader.returning(new Item(1, "second")))).contains(new Item(1, "first"));
			assertThat(loader.calls()).isEqualTo(1);
			warmup.cool(false);
			instance.redis.delete(keys(instance));
			// Nothing left in either tier: L1 was dropped, not kept.
			assertThat(cache.get(1L, loader.returning(new Item(1, "third")))).contains(new Item(1, "third"));
		}
		assertThat(loader.calls()).isEqualTo(2);
	}

	@Test
	void aWarmupCooledInBothTiersLoadsAgainAndDeletesTheKeysItLeft() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		cache.get(1L, loader.returning(new Item(1, "real")));
		Set<String> before = keys(instance);
		try (TieredCacheWarmup warmup = instance.manager.openWarmup();
				TieredCacheWarmup.Scope scope = warmup.enter()) {
			for (long id = 1; id <= 20; id++) {
				cache.get(id, loader.returning(new Item(id, "first")));
			}
			Set<String> firstRound = keys(instance);
			firstRound.removeAll(before);
			warmup.cool(true);
			assertThat(keys(instance)).as("the first round's keys").doesNotContainAnyElementsOf(firstRound);
			assertThat(cache.get(1L, loader.returning(new Item(1, "second")))).contains(new Item(1, "second"));
		}
		assertThat(loader.calls()).isEqualTo(22);
		assertThat(keys(instance)).isEqualTo(before);
		assertThat(cache.get(1L, loader.returning(new Item(1, "other")))).contains(new Item(1, "real"));
	}

	@Test
	void readsOnOtherThreadsDuringAWarmupUseTheRealCache() throws Exception {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		try (TieredCacheWarmup warmup = instance.manager.openWarmup()) {
			Thread other = new Thread(() -> cache.get(2L, loader.returning(new Item(2, "real"))));
			try (TieredCacheWarmup.Scope scope = warmup.enter()) {
				other.start();
				other.join();
			}
		}
		assertThat(cache.isInL1(2L)).isTrue();
		assertThat(cache.get(2L, loader.returning(new Item(2, "other")))).contains(new Item(2, "real"));
		assertThat(loader.calls()).isEqualTo(1);
	}

	@Test
	void onlyOneWarmupIsOpenAtATime() {
		CacheInstance instance = instance();
		try (TieredCacheWarmup warmup = instance.manager.openWarmup()) {
			assertThatIllegalStateException().isThrownBy(instance.manager::openWarmup);
		}
		instance.manager.openWarmup().close();
	}

	private CacheInstance instance() {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), this.properties));
	}

	/** Every key under the instance's prefix (KEYS is fine on a test server). */
	private Set<String> keys(CacheInstance instance) {
		return instance.redis.keys(this.properties.getKeyPrefix() + ":*");
	}

}
