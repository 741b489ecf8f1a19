package dev.concertcache.tiered.support;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.core.RedisCallback;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.HotSetFill;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.hotset.HotSetConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance that joins a warm fleet fills its L1 with the entries the others read most (their published hot
 * set) before it is ready, through the same Redis read as a miss: shown with the tier counters, the loader's calls
 * and the values served, over a real Redis.
 */
class TieredCacheHotSetTests {

	private static final String CACHE = "items";

	@RegisterExtension
	final TestScope scope = new TestScope();

	private final CacheInstance.Settings properties = CacheInstance.properties(
			(builder) -> builder.withCacheConfiguration(CACHE, TieredCacheConfiguration.defaultConfig()
				.withL1MaximumSize(40)));

	@Test
	void anInstanceStartedAfterAnotherHasTheOthersHottestKeysInL1BeforeItServesAnything() {
		CacheInstance first = instance(RedisServer.shared(), 10);
		servesTenHotAndTwentyColdKeys(first);
		ManagerInternals.hotSet(first.manager).publish();
		CacheInstance joiner = instance(RedisServer.shared(), 10);
		CacheUnderTest<Long, Item> cache = joiner.cache(CACHE, Long.class, Item.class);
		HotSetFill fill = joiner.manager.fillHotSet();
		assertThat(fill.published()).isEqualTo(10);
		assertThat(fill.filled()).isEqualTo(10);
		assertThat(fill.complete()).isTrue();
		CountingLoader loader = new CountingLoader();
		for (long id = 1; id <= 10; id++) {
			assertThat(cache.get(id, loader.returning(new Item(id, "from the database")))).contains(item(id));
		}
		assertThat(loader.calls()).isZero();
		assertThat(joiner.gets(CACHE, "l1", "hit")).isEqualTo(10);
		assertThat(joiner.gets(CACHE, "l1", "miss")).isZero();
		assertThat(joiner.gets(CACHE, "l2", "hit") + joiner.gets(CACHE, "l2", "miss")).isZero();
		assertThat(cache.isInL1(11L)).isFalse();
		assertThat(joiner.count("tiered.cache.hot.set.filled", "cache", CACHE)).isEqualTo(10);
	}

	@Test
	void aKeyEvictedAfterThePublishIsNotFilledWithItsOldValue() {
		CacheInstance first = instance(RedisServer.shared(), 10);
		servesTenHotAndTwentyColdKeys(first);
		ManagerInternals.hotSet(first.manager).publish();
		first.cache(CACHE, Long.class, Item.class).evict(3L);
		CacheInstance joiner = instance(RedisServer.shared(), 10);
		CacheUnderTest<Long, Item> cache = joiner.cache(CACHE, Long.class, Item.class);
		assertThat(joiner.manager.fillHotSet().filled()).isEqualTo(9);
		assertThat(cache.isInL1(3L)).isFalse();
		CountingLoader loader = new CountingLoader();
		assertThat(cache.get(3L, loader.returning(new Item(3, "written after the publish"))))
			.contains(new Item(3, "written after the publish"));
		assertThat(loader.calls()).isEqualTo(1);
	}

	@Test
	void nothingIsFilledAfterAnEvictAllOfTheCache() {
		CacheInstance first = instance(RedisServer.shared(), 10);
		servesTenHotAndTwentyColdKeys(first);
		ManagerInternals.hotSet(first.manager).publish();
		first.cache(CACHE, Long.class, Item.class).evictAll();
		CacheInstance joiner = instance(RedisServer.shared(), 10);
		CacheUnderTest<Long, Item> cache = joiner.cache(CACHE, Long.class, Item.class);
		HotSetFill fill = joiner.manager.fillHotSet();
		assertThat(fill.published()).isEqualTo(10);
		assertThat(fill.filled()).isZero();
		CountingLoader loader = new CountingLoader();
		assertThat(cache.get(1L, loader.returning(new Item(1, "new")))).contains(new Item(1, "new"));
		assertThat(loader.calls()).isEqualTo(1);
	}

	@Test
	void aFillTakesAtMostItsSizeOfTheHottestKeys() {
		CacheInstance first = instance(RedisServer.shared(), 30);
		servesTenHotAndTwentyColdKeys(first);
		ManagerInternals.hotSet(first.manager).publish();
		CacheInstance joiner = instance(RedisServer.shared(), 5);
		CacheUnderTest<Long, Item> cache = joiner.cache(CACHE, Long.class, Item.class);
		HotSetFill fill = joiner.manager.fillHotSet();
		assertThat(fill.published()).isEqualTo(5);
		assertThat(fill.filled()).isEqualTo(5);
		assertThat(LongStream.rangeClosed(1, 30).filter(cache::isInL1).boxed().toList()).hasSize(5)
			.allMatch((id) -> id <= 10);
	}

	@Test
	void theHotSetKeepsAtMostSizeKeysAndExpiresWithoutPublishes() {
		CacheInstance first = instance(RedisServer.shared(), 10);
		CacheInstance second = instance(RedisServer.shared(), 10);
		servesTenHotAndTwentyColdKeys(first);
		CacheUnderTest<Long, Item> other = second.cache(CACHE, Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		for (int round = 0; round < 5; round++) {
			for (long id = 101; id <= 130; id++) {
				other.get(id, loader.returning(item(id)));
			}
		}
		ManagerInternals.hotSet(first.manager).publish();
		ManagerInternals.hotSet(second.manager).publish();
		String key = ManagerInternals.redisTier(first.manager).hotSets().hotSetKey(CACHE);
		assertThat(first.redis.opsForZSet().size(key)).isEqualTo(10);
		assertThat(first.redis.getExpire(key)).isPositive()
			.isLessThanOrEqualTo(HotSetConfiguration.DEFAULT_PUBLISH_INTERVAL.toSeconds()
					* HotSetConfiguration.TTL_INTERVALS);
	}

	@Test
	void aFillAgainstARedisThatDoesNotAnswerEndsAtItsTimeoutAndFillsNothing() {
		RedisServer server = new RedisServer();
		server.start();
		this.scope.closeAfter(server);
		CacheInstance first = instance(server, 10);
		servesTenHotAndTwentyColdKeys(first);
		ManagerInternals.hotSet(first.manager).publish();
		CacheInstance joiner = instance(server, 10,
				(builder) -> builder.hotSet(HotSetConfiguration.defaultConfig().withSize(10)
					.withFillTimeout(Duration.ofMillis(50))));
		CacheUnderTest<Long, Item> cache = joiner.cache(CACHE, Long.class, Item.class);
		// Every command waits 2 s: past the instance's 250 ms command timeout, far past the fill's 50 ms.
		first.redis.execute((RedisCallback<Object>) (connection) -> connection.execute("CLIENT", bytes("PAUSE"),
				bytes("2000"), bytes("ALL")));
		HotSetFill fill = joiner.manager.fillHotSet();
		assertThat(fill.complete()).isFalse();
		assertThat(fill.filled()).isZero();
		assertThat(fill.took()).isLessThan(Duration.ofMillis(250));
		assertThat(cache.isInL1(1L)).isFalse();
	}

	/** Keys 1 to 30 read once (L1 over half full: Caffeine counts frequencies), then 1 to 10 five times more. */
	private static void servesTenHotAndTwentyColdKeys(CacheInstance instance) {
		CacheUnderTest<Long, Item> cache = instance.cache(CACHE, Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		for (long id = 1; id <= 30; id++) {
			cache.get(id, loader.returning(item(id)));
		}
		for (int round = 0; round < 5; round++) {
			for (long id = 1; id <= 10; id++) {
				cache.get(id, loader.returning(item(id)));
			}
		}
		assertThat(loader.calls()).isEqualTo(30);
	}

	private static Item item(long id) {
		return new Item(id, "item " + id);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private CacheInstance instance(RedisServer server, int size) {
		return instance(server, size, (builder) -> builder.hotSet(HotSetConfiguration.defaultConfig().withSize(size)));
	}

	private CacheInstance instance(RedisServer server, int size,
			Consumer<TieredCacheManagerBuilder> customizer) {
		return this.scope.closeAfter(CacheInstance.start(server, this.properties.and(customizer)));
	}

}
