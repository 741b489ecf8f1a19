package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.List;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCacheConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Time to live per tier, absent results shorter, each spread by the jitter. L1 time is a fake ticker; Redis
 * keeps its own clock, so its TTLs are read back with PTTL.
 */
class TieredCacheExpiryTests {

	private static final int KEYS = 1000;

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void l1EntryExpiresAfterItsTtlAndIsPromotedAgainFromRedis() {
		CacheInstance instance = instance(CacheInstance.properties((settings) -> {
			settings.cacheDefaults(settings.cacheDefaults().withL1Ttl(Duration.ofSeconds(10)));
			settings.cacheDefaults(settings.cacheDefaults().withJitter(0));
			// Without a stale window L1 keeps the entry one more TTL, to be revalidated (with one, the window).
			settings.cacheDefaults(settings.cacheDefaults().withStaleIfError(Duration.ZERO));
		}));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		cache.get(1L, loader.returning(new Item(1, "one")));
		instance.ticker.advance(Duration.ofSeconds(9));
		assertThat(cache.isInL1(1L)).isTrue();
		instance.ticker.advance(Duration.ofSeconds(1));
		assertThat(cache.isInL1(1L)).isFalse();
		cache.get(1L, loader.returning(new Item(1, "one")));
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(instance.gets("items", "l2", "hit")).isEqualTo(1);
		instance.ticker.advance(Duration.ofSeconds(20));
		assertThat(cache.isStaleInL1(1L)).isFalse();
		assertThat(instance.count("tiered.cache.evictions", "cache", "items", "tier", "l1", "cause", "expired"))
			.isEqualTo(1);
	}

	@Test
	void jitterSpreadsTheL1ExpiryOfEntriesWrittenTogether() {
		CacheInstance instance = instance(CacheInstance.properties((settings) -> {
			settings.cacheDefaults(settings.cacheDefaults().withL1Ttl(Duration.ofSeconds(100)));
			settings.cacheDefaults(settings.cacheDefaults().withJitter(0.1));
		}));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		LongStream.range(0, KEYS).forEach((key) -> cache.get(key, new CountingLoader().returning(new Item(key, "v"))));
		instance.ticker.advance(Duration.ofSeconds(89));
		assertThat(inL1(cache)).as("none expires before ttl - 10%").isEqualTo(KEYS);
		instance.ticker.advance(Duration.ofSeconds(6));
		// Uniform over 90..110 s: about a quarter expire by 95 s.
		assertThat(inL1(cache)).as("some, not all, expire by ttl - 5%").isBetween(KEYS * 60 / 100, KEYS * 90 / 100);
		instance.ticker.advance(Duration.ofSeconds(10));
		assertThat(inL1(cache)).as("most expire by ttl + 5%").isBetween(KEYS * 10 / 100, KEYS * 40 / 100);
		instance.ticker.advance(Duration.ofSeconds(6));
		assertThat(inL1(cache)).as("all expire by ttl + 10%").isZero();
	}

	@Test
	void jitterSpreadsTheRedisTimeToLive() {
		CacheInstance.Settings properties = CacheInstance.properties((settings) -> {
			settings.cacheDefaults(settings.cacheDefaults().withL2Ttl(Duration.ofSeconds(600)));
			settings.cacheDefaults(settings.cacheDefaults().withJitter(0.1));
			settings.cacheDefaults(settings.cacheDefaults().withStaleIfError(Duration.ZERO));
		});
		CacheInstance instance = instance(properties);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		long before = instance.clock.millis();
		LongStream.range(0, 200).forEach((key) -> cache.get(key, new CountingLoader().returning(new Item(key, "v"))));
		long after = instance.clock.millis();
		// Each value's fresh-until time as written, against the cache's clock read around the writes: Redis' own
		// countdown runs on its wall clock, which a loaded machine can stall for seconds.
		List<Long> freshUntil = LongStream.range(0, 200)
			.mapToObj((key) -> Long.parseLong(instance.redis.opsForValue()
				.get(cache.redisKey(key))
				.replaceFirst("^\\{\"v\":1,\"f\":(\\d+),.*$", "$1")))
			.toList();
		long min = freshUntil.stream().mapToLong(Long::longValue).min().orElseThrow();
		long max = freshUntil.stream().mapToLong(Long::longValue).max().orElseThrow();
		assertThat(min - before).isGreaterThanOrEqualTo(540_000);
		assertThat(max - after).isLessThanOrEqualTo(660_000);
		assertThat(max - min).as("spread of 200 TTLs over ±60 s").isGreaterThan(90_000);
	}

	@Test
	void absentResultLeavesL1AfterTheAbsentTtlWhileValuesStay() {
		CacheInstance instance = instance(CacheInstance.properties((settings) -> {
			settings.cacheDefaults(settings.cacheDefaults().withL1Ttl(Duration.ofSeconds(30)));
			settings.cacheDefaults(settings.cacheDefaults().withAbsentTtl(Duration.ofSeconds(5)));
			settings.cacheDefaults(settings.cacheDefaults().withJitter(0));
		}));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, new CountingLoader().returning(new Item(1, "one")));
		cache.get(404L, new CountingLoader().absent());
		instance.ticker.advance(Duration.ofSeconds(5));
		assertThat(cache.isInL1(404L)).isFalse();
		assertThat(cache.isInL1(1L)).isTrue();
	}

	@Test
	void perCacheOverridesApplyToThatCacheOnly() {
		CacheInstance instance = instance(CacheInstance.properties((settings) -> {
			settings.cacheDefaults(settings.cacheDefaults().withJitter(0));
			settings.withCacheConfiguration("pages", settings.cacheDefaults().withL1Ttl(Duration.ofSeconds(2)));
		}));
		CacheUnderTest<Long, Item> pages = instance.cache("pages", Long.class, Item.class);
		CacheUnderTest<Long, Item> items = instance.cache("items", Long.class, Item.class);
		pages.get(1L, new CountingLoader().returning(new Item(1, "page")));
		items.get(1L, new CountingLoader().returning(new Item(1, "item")));
		instance.ticker.advance(Duration.ofSeconds(2));
		assertThat(pages.isInL1(1L)).isFalse();
		assertThat(items.isInL1(1L)).isTrue();
		assertThat(ManagerInternals.spec(instance.manager, "pages").l2Ttl())
			.isEqualTo(TieredCacheConfiguration.DEFAULT_L2_TTL);
	}

	private static int inL1(CacheUnderTest<Long, Item> cache) {
		return (int) LongStream.range(0, KEYS).filter(cache::isInL1).count();
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), properties));
	}

}
