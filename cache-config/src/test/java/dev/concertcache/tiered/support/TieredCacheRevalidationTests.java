package dev.concertcache.tiered.support;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.TieredCacheConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An L1 entry past its freshness that Redis still holds, byte for byte, keeps its value instance (and so the JSON
 * the API wrote for it); anything else Redis returns, and anything an eviction removed, is read anew (ADR 0201).
 */
class TieredCacheRevalidationTests {

	private static final Duration L1_TTL = Duration.ofSeconds(10);

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void expiredEntryWhoseRedisBytesAreUnchangedKeepsItsInstanceAndCountsAsAnL2Hit() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		Item loaded = cache.lookup(1L, loader.returning(new Item(1, "one"))).value().orElseThrow();
		instance.ticker.advance(L1_TTL);
		assertThat(cache.isInL1(1L)).isFalse();
		Lookup<Item> again = cache.lookup(1L, loader.returning(new Item(1, "one")));
		assertThat(again.value().orElseThrow()).isSameAs(loaded);
		assertThat(again.source()).isEqualTo(Source.L2);
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(instance.gets("items", "l2", "hit")).isEqualTo(1);
		assertThat(cache.isInL1(1L)).as("fresh again for an L1 time to live").isTrue();
	}

	@Test
	void cacheThatServesNothingStaleStillKeepsTheInstanceOfAnUnchangedValue() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> strict = instance.cache("strict", Long.class, Item.class);
		Item loaded = strict.lookup(1L, new CountingLoader().returning(new Item(1, "one"))).value().orElseThrow();
		instance.ticker.advance(L1_TTL);
		assertThat(strict.lookup(1L, new CountingLoader().returning(new Item(1, "one"))).value().orElseThrow())
			.isSameAs(loaded);
	}

	@Test
	void entryDecodedFromRedisKeepsItsInstanceAcrossExpiriesWhileRedisHoldsTheSameBytes() {
		CacheInstance writer = instance();
		CacheInstance reader = instance();
		writer.cache("items", Long.class, Item.class).lookup(1L, new CountingLoader().returning(new Item(1, "one")));
		CacheUnderTest<Long, Item> cache = reader.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		Item decoded = cache.lookup(1L, loader.returning(new Item(1, "one"))).value().orElseThrow();
		for (int expiry = 0; expiry < 3; expiry++) {
			reader.ticker.advance(L1_TTL);
			assertThat(cache.lookup(1L, loader.returning(new Item(1, "one"))).value().orElseThrow()).isSameAs(decoded);
		}
		assertThat(loader.calls()).isZero();
		assertThat(reader.gets("items", "l2", "hit")).isEqualTo(4);
	}

	@Test
	void expiredEntryWhoseValueChangedInRedisGetsTheNewValue() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		Item loaded = cache.lookup(1L, new CountingLoader().returning(new Item(1, "one"))).value().orElseThrow();
		// What another instance's load would leave after an eviction this instance has not heard of yet.
		String key = cache.redisKey(1L);
		instance.redis.opsForValue().set(key, instance.redis.opsForValue().get(key).replace("\"one\"", "\"two\""));
		instance.ticker.advance(L1_TTL);
		Lookup<Item> again = cache.lookup(1L, new CountingLoader().returning(new Item(1, "loader")));
		assertThat(again.value()).contains(new Item(1, "two"));
		assertThat(again.value().orElseThrow()).isNotSameAs(loaded);
		assertThat(again.source()).isEqualTo(Source.L2);
	}

	@Test
	void sameValueStoredAgainIsOtherBytesAndDecodedAnew() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		Item loaded = cache.lookup(1L, new CountingLoader().returning(new Item(1, "one"))).value().orElseThrow();
		String key = cache.redisKey(1L);
		String raw = instance.redis.opsForValue().get(key);
		long freshUntil = Long.parseLong(raw.replaceFirst("^\\{\"v\":1,\"f\":(\\d+),.*$", "$1"));
		instance.redis.opsForValue().set(key, raw.replace("\"f\":" + freshUntil, "\"f\":" + (freshUntil + 1)));
		instance.ticker.advance(L1_TTL);
		Lookup<Item> again = cache.lookup(1L, new CountingLoader().returning(new Item(1, "loader")));
		assertThat(again.value()).contains(new Item(1, "one"));
		assertThat(again.value().orElseThrow()).isNotSameAs(loaded);
	}

	@Test
	void expiredEntryWhoseRedisValueIsPastItsFreshnessIsLoadedAgain() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		cache.lookup(1L, loader.returning(new Item(1, "one")));
		instance.ticker.advance(L1_TTL);
		instance.clock.advance(TieredCacheConfiguration.DEFAULT_L2_TTL.plusMinutes(2));
		Lookup<Item> again = cache.lookup(1L, loader.returning(new Item(1, "two")));
		assertThat(again.value()).contains(new Item(1, "two"));
		assertThat(again.source()).isEqualTo(Source.LOADER);
	}

	@Test
	void entryRemovedByAnEvictionIsNotRevivedEvenIfRedisHoldsItsBytesAgain() {
		CacheInstance instance = instance();
		CacheInstance other = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		Item loaded = cache.lookup(1L, new CountingLoader().returning(new Item(1, "one"))).value().orElseThrow();
		String key = cache.redisKey(1L);
		String raw = instance.redis.opsForValue().get(key);
		other.cache("items", Long.class, Item.class).evict(1L);
		await().atMost(Duration.ofSeconds(5)).until(() -> !cache.isInL1(1L) && !cache.isStaleInL1(1L));
		instance.redis.opsForValue().set(key, raw);
		instance.ticker.advance(L1_TTL);
		Lookup<Item> again = cache.lookup(1L, new CountingLoader().returning(new Item(1, "loader")));
		assertThat(again.value()).contains(new Item(1, "one"));
		assertThat(again.value().orElseThrow()).isNotSameAs(loaded);
	}

	@Test
	void ownEvictionDropsTheEntrySoTheNextReadLoads() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		Item loaded = cache.lookup(1L, new CountingLoader().returning(new Item(1, "one"))).value().orElseThrow();
		cache.evict(1L);
		instance.ticker.advance(L1_TTL);
		Lookup<Item> again = cache.lookup(1L, new CountingLoader().returning(new Item(1, "one")));
		assertThat(again.value().orElseThrow()).isNotSameAs(loaded);
		assertThat(again.source()).isEqualTo(Source.LOADER);
	}

	/** L1 10 s without jitter, the default stale window; cache "strict" serves nothing stale. */
	private final CacheInstance.Settings properties = CacheInstance.properties(
			(settings) -> settings.cacheDefaults(settings.cacheDefaults().withL1Ttl(L1_TTL).withJitter(0))
				.withCacheConfiguration("strict", settings.cacheDefaults().withStaleIfError(Duration.ZERO)));

	/** An instance of the application; every instance of one test shares its key prefix. */
	private CacheInstance instance() {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), this.properties));
	}

}
