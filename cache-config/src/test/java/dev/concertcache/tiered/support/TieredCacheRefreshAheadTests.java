package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.TieredCacheConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Refresh-ahead (ADR 0204): a hit in the last part of an L1 entry's time to live answers from L1 and reads the key
 * again in the background, under the same rules as an expired entry's reader. L1 time is a fake ticker; the
 * background reads are held by the instance until a test runs them.
 */
class TieredCacheRefreshAheadTests {

	private static final Item OLD = new Item(1, "old");

	private static final Item NEW = new Item(1, "new");

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void aHitInTheLastFifthOfTheL1TtlAnswersFromL1AndRefreshesTheEntryInTheBackground() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		cache.get(1L, loader.returning(OLD));
		instance.ticker.advance(Duration.ofSeconds(8));

		assertThat(cache.lookup(1L, loader.returning(OLD)).source()).isEqualTo(Source.L1);
		assertThat(instance.gets("items", "l2", "hit")).isZero();
		assertThat(instance.refreshes.runAll()).isEqualTo(1);
		// Counted apart: the callers' hit ratios (ADR 0015) are not the refresher's.
		assertThat(instance.count("tiered.cache.l1.refreshes", "cache", "items", "result", "hit")).isEqualTo(1);
		assertThat(instance.gets("items", "l2", "hit")).isZero();

		// Past the first entry's time to live: the refreshed one (read at 8 s) is still fresh.
		instance.ticker.advance(Duration.ofSeconds(9));
		assertThat(cache.lookup(1L, loader.returning(OLD)).source()).isEqualTo(Source.L1);
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(instance.gets("items", "l1", "miss")).isEqualTo(1);
	}

	@Test
	void aHitBeforeTheLastFifthOfTheL1TtlRefreshesNothing() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, new CountingLoader().returning(OLD));
		instance.ticker.advance(Duration.ofMillis(7999));

		cache.get(1L, new CountingLoader().returning(OLD));
		assertThat(instance.refreshes.size()).isZero();
	}

	@Test
	void manyHitsInTheWindowRefreshTheEntryOnce() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, new CountingLoader().returning(OLD));
		instance.ticker.advance(Duration.ofSeconds(8));

		for (int i = 0; i < 5; i++) {
			cache.get(1L, new CountingLoader().returning(OLD));
		}
		assertThat(instance.refreshes.size()).isEqualTo(1);
	}

	@Test
	void aRefreshOffDoesNotRefresh() {
		CacheInstance instance = instance(0);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, new CountingLoader().returning(OLD));
		instance.ticker.advance(Duration.ofMillis(9999));

		cache.get(1L, new CountingLoader().returning(OLD));
		assertThat(instance.refreshes.size()).isZero();
	}

	@Test
	void aValueTheRefreshReadBeforeAnEvictionIsNotKeptAfterIt() throws Exception {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		ParkedRefresh refresh = ParkedRefresh.inTheDatabase(instance, cache);

		cache.evict(1L);
		refresh.finish();

		assertThat(cache.isInL1(1L)).isFalse();
		assertThat(cache.get(1L, new CountingLoader().returning(NEW))).contains(NEW);
	}

	@Test
	void aValueTheRefreshReadBeforeAnotherInstancesEvictionIsNotKeptAfterItsMessage() throws Exception {
		CacheInstance.Settings properties = properties(TieredCacheConfiguration.DEFAULT_L1_REFRESH_AHEAD);
		CacheInstance reader = instance(properties);
		CacheInstance writer = instance(properties);
		CacheUnderTest<Long, Item> onReader = reader.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onWriter = writer.cache("items", Long.class, Item.class);
		ParkedRefresh refresh = ParkedRefresh.inTheDatabase(reader, onReader);

		onWriter.evict(1L);
		await().atMost(Duration.ofSeconds(5))
			.until(() -> reader.count("tiered.cache.invalidations.received", "cache", "items") >= 1);
		refresh.finish();

		assertThat(onReader.isInL1(1L)).isFalse();
		assertThat(onReader.get(1L, new CountingLoader().returning(NEW))).contains(NEW);
	}

	@Test
	void aRefreshThatFindsTheLoaderFailingKeepsTheEntryUntilItExpires() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, new CountingLoader().returning(OLD));
		instance.redis.delete(cache.redisKey(1L));
		instance.ticker.advance(Duration.ofSeconds(8));

		cache.get(1L, () -> {
			throw new IllegalStateException("database down");
		});
		instance.refreshes.runAll();
		assertThat(cache.isInL1(1L)).isTrue();
		instance.ticker.advance(Duration.ofSeconds(2));
		assertThat(cache.isInL1(1L)).isFalse();
	}

	private CacheInstance instance() {
		return instance(properties(TieredCacheConfiguration.DEFAULT_L1_REFRESH_AHEAD));
	}

	private CacheInstance instance(double refreshAhead) {
		return instance(properties(refreshAhead));
	}

	/** L1 for 10 s, unjittered, nothing served stale; a key prefix of its own (instances sharing it hear each other). */
	private static CacheInstance.Settings properties(double refreshAhead) {
		return CacheInstance.properties((settings) -> settings.cacheDefaults(settings.cacheDefaults()
			.withL1Ttl(Duration.ofSeconds(10))
			.withJitter(0)
			.withL1RefreshAhead(refreshAhead)
			.withStaleIfError(Duration.ZERO)));
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), properties));
	}

	/**
	 * A refresh of key 1 parked inside the loader after it read the old row: Redis lost the key, so the refresh
	 * reads the database, which still had the old row then. {@link #finish} lets it return that row.
	 */
	private record ParkedRefresh(Thread thread, CountDownLatch release) {

		static ParkedRefresh inTheDatabase(CacheInstance instance, CacheUnderTest<Long, Item> cache) {
			cache.get(1L, new CountingLoader().returning(OLD));
			instance.redis.delete(cache.redisKey(1L));
			instance.ticker.advance(Duration.ofSeconds(8));
			CountDownLatch readOld = new CountDownLatch(1);
			CountDownLatch release = new CountDownLatch(1);
			Supplier<Optional<Item>> slowDatabase = () -> {
				readOld.countDown();
				Latches.awaitRelease(release);
				return Optional.of(OLD);
			};
			assertThat(cache.get(1L, slowDatabase)).contains(OLD);
			Thread thread = new Thread(instance.refreshes::runAll, "refresh");
			thread.start();
			Latches.awaitRelease(readOld);
			return new ParkedRefresh(thread, release);
		}

		void finish() throws InterruptedException {
			this.release.countDown();
			this.thread.join(10_000);
		}

	}

}
