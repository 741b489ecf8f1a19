package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.CommandTrap.Sent;
import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCacheMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * The read path L1 → L2 → loader against a real Redis, proven with the tier counters and loader calls.
 */
class TieredCacheReadPathTests {

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void secondReadIsAnL1HitAndTheLoaderRunsOnce() {
		CacheInstance instance = instance(CacheInstance.properties());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		assertThat(cache.get(1L, loader.returning(new Item(1, "one")))).contains(new Item(1, "one"));
		assertThat(cache.get(1L, loader.returning(new Item(1, "changed")))).contains(new Item(1, "one"));
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(instance.gets("items", "l1", "miss")).isEqualTo(1);
		assertThat(instance.gets("items", "l1", "hit")).isEqualTo(1);
		assertThat(instance.gets("items", "l2", "miss")).isEqualTo(1);
		assertThat(instance.gets("items", "l2", "hit")).isZero();
		assertThat(instance.loads("items")).isEqualTo(1);
	}

	@Test
	void l1MissOnAnotherInstanceIsServedFromRedisAndPromotedIntoItsL1() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CountingLoader loader = new CountingLoader();
		a.cache("items", Long.class, Item.class).get(7L, loader.returning(new Item(7, "seven")));
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		assertThat(onB.get(7L, loader.returning(new Item(7, "other")))).contains(new Item(7, "seven"));
		assertThat(onB.get(7L, loader.returning(new Item(7, "other")))).contains(new Item(7, "seven"));
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(b.gets("items", "l1", "miss")).isEqualTo(1);
		assertThat(b.gets("items", "l2", "hit")).isEqualTo(1);
		assertThat(b.gets("items", "l1", "hit")).isEqualTo(1);
		assertThat(onB.isInL1(7L)).isTrue();
	}

	@Test
	void aKeyNeitherTierHoldsCostsTwoRoundTripsToRedisTheGetOrLockStepAndTheStore() {
		CommandLog commands = new CommandLog();
		CacheInstance instance = CacheInstance.start(RedisServer.shared(), CacheInstance.properties(), commands);
		this.scope.closeAfter(instance);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		cache.get(1L, loader.returning(new Item(1, "one")));
		commands.clear();
		assertThat(cache.get(2L, loader.returning(new Item(2, "two")))).contains(new Item(2, "two"));
		assertThat(commands.naming(cache.redisKey(2L))).containsExactly("EVALSHA", "EVALSHA");
		assertThat(loader.calls()).isEqualTo(2);
		assertThat(instance.gets("items", "l2", "miss")).isEqualTo(2);
	}

	@Test
	void aKeyOnlyRedisHoldsCostsOneRoundTripToRedis() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance writer = instance(properties);
		CommandLog commands = new CommandLog();
		CacheInstance reader = CacheInstance.start(RedisServer.shared(), properties, commands);
		this.scope.closeAfter(reader);
		CountingLoader loader = new CountingLoader();
		writer.cache("items", Long.class, Item.class).get(2L, loader.returning(new Item(2, "two")));
		CacheUnderTest<Long, Item> cache = reader.cache("items", Long.class, Item.class);
		commands.clear();
		assertThat(cache.get(2L, loader.returning(new Item(2, "other")))).contains(new Item(2, "two"));
		assertThat(commands.naming(cache.redisKey(2L))).hasSize(1);
		assertThat(reader.gets("items", "l2", "hit")).isEqualTo(1);
		assertThat(loader.calls()).isEqualTo(1);
	}

	@Test
	void concurrentMissesOfOneKeyOnOneInstanceLoadOnce() throws Exception {
		CacheInstance instance = instance(CacheInstance.properties());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		int readers = 16;
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger calls = new AtomicInteger();
		List<Future<Optional<Item>>> results = new ArrayList<>();
		for (int i = 0; i < readers; i++) {
			results.add(this.scope.submit(() -> cache.get(3L, () -> {
				calls.incrementAndGet();
				Latches.awaitRelease(release);
				return Optional.of(new Item(3, "three"));
			})));
		}
		// Every reader has either started the load or joined it before the load may finish.
		await().atMost(Duration.ofSeconds(5))
			.until(() -> instance.gets("items", "l1", "hit") + instance.gets("items", "l1", "miss") == readers);
		release.countDown();
		for (Future<Optional<Item>> result : results) {
			assertThat(result.get(5, TimeUnit.SECONDS)).contains(new Item(3, "three"));
		}
		assertThat(calls).hasValue(1);
		assertThat(instance.gets("items", "l1", "miss")).isEqualTo(1);
		assertThat(instance.gets("items", "l1", "hit")).isEqualTo(readers - 1);
	}

	@Test
	void coldStartOfTwoInstancesLoadsOnceWhileTheOtherWaitsForRedis() throws Exception {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CountDownLatch loading = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger calls = new AtomicInteger();
		Future<Optional<Item>> onA = this.scope.submit(() -> a.cache("items", Long.class, Item.class).get(5L, () -> {
			calls.incrementAndGet();
			loading.countDown();
			Latches.awaitRelease(release);
			return Optional.of(new Item(5, "five"));
		}));
		assertThat(loading.await(5, TimeUnit.SECONDS)).isTrue();
		CacheUnderTest<Long, Item> onBCache = b.cache("items", Long.class, Item.class);
		CountDownLatch waiting = new CountDownLatch(1);
		// B's second get-or-lock step is sent only after it found the lock taken and waited for its holder.
		b.commands.nth(2, Sent.script().and(Sent.naming(onBCache.redisKey(5L))), waiting::countDown);
		Future<Optional<Item>> onB = this.scope.submit(() -> onBCache.get(5L, () -> {
			calls.incrementAndGet();
			return Optional.of(new Item(5, "loaded by b"));
		}));
		// B has missed Redis and found the lock taken: A is released only once B is waiting for its value.
		assertThat(waiting.await(5, TimeUnit.SECONDS)).as("B took the lock-wait path").isTrue();
		assertThat(b.gets("items", "l2", "miss")).isEqualTo(1);
		release.countDown();
		assertThat(onA.get(5, TimeUnit.SECONDS)).contains(new Item(5, "five"));
		assertThat(onB.get(5, TimeUnit.SECONDS)).contains(new Item(5, "five"));
		assertThat(calls).hasValue(1);
		assertThat(a.loads("items") + b.loads("items")).isEqualTo(1);
	}

	@Test
	void waiterLoadsByItselfWhenTheLockHolderTakesLongerThanTheLockTtl() throws Exception {
		CacheInstance.Settings properties = CacheInstance.properties(
				(settings) -> settings.lockTtl(Duration.ofMillis(200)));
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CountDownLatch loading = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Future<Optional<Item>> onA = this.scope.submit(() -> a.cache("items", Long.class, Item.class).get(5L, () -> {
			loading.countDown();
			Latches.awaitRelease(release);
			return Optional.of(new Item(5, "slow"));
		}));
		assertThat(loading.await(5, TimeUnit.SECONDS)).isTrue();
		CountingLoader loader = new CountingLoader();
		assertThat(b.cache("items", Long.class, Item.class).get(5L, loader.returning(new Item(5, "by b"))))
			.contains(new Item(5, "by b"));
		assertThat(loader.calls()).isEqualTo(1);
		release.countDown();
		assertThat(onA.get(5, TimeUnit.SECONDS)).contains(new Item(5, "slow"));
	}

	@Test
	void absentResultIsCachedInBothTiers() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CountingLoader loader = new CountingLoader();
		assertThat(a.cache("items", Long.class, Item.class).get(404L, loader.absent())).isEmpty();
		assertThat(a.cache("items", Long.class, Item.class).get(404L, loader.absent())).isEmpty();
		assertThat(b.cache("items", Long.class, Item.class).get(404L, loader.absent())).isEmpty();
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(a.meters.find("tiered.cache.loads").tags("cache", "items", "result", "absent").timer().count())
			.isEqualTo(1);
		String key = a.cache("items", Long.class, Item.class).redisKey(404L);
		assertThat(a.redis.opsForValue().get(key)).matches("\\{\"v\":1,\"f\":\\d+,\"r\":\\d+,\"s\":\"[0-9a-f]{8}\",\"absent\":true}");
		long ttl = a.redis.getExpire(key, TimeUnit.MILLISECONDS);
		assertThat(ttl).isPositive().isLessThanOrEqualTo((long) (5000 * 1.1));
	}

	@Test
	void loaderFailurePropagatesAndIsNotCached() {
		CacheInstance instance = instance(CacheInstance.properties());
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThatIllegalStateException()
			.isThrownBy(() -> cache.get(9L, () -> {
				throw new IllegalStateException("database down");
			}))
			.withMessage("database down");
		CountingLoader loader = new CountingLoader();
		assertThat(cache.get(9L, loader.returning(new Item(9, "nine")))).contains(new Item(9, "nine"));
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(instance.meters.find("tiered.cache.loads").tags("cache", "items", "result", "failure").timer().count())
			.isEqualTo(1);
	}

	@Test
	void redisModeReadsEveryTimeFromRedisAndCountsOnlyTheL2Tier() {
		CacheInstance.Settings properties = CacheInstance
			.properties((settings) -> settings.mode(TieredCacheMode.REDIS));
		CacheInstance instance = instance(properties);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();
		for (int i = 0; i < 5; i++) {
			assertThat(cache.get(1L, loader.returning(new Item(1, "one")))).contains(new Item(1, "one"));
		}
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(instance.gets("items", "l2", "miss")).isEqualTo(1);
		assertThat(instance.gets("items", "l2", "hit")).isEqualTo(4);
		assertThat(instance.gets("items", "l1", "hit") + instance.gets("items", "l1", "miss")).isZero();
		assertThat(cache.isInL1(1L)).isFalse();
	}

	@Test
	void modeNoneCannotBuildATwoTierManager() {
		CacheInstance.Settings properties = CacheInstance
			.properties((settings) -> settings.mode(TieredCacheMode.NONE));
		assertThatIllegalStateException().isThrownBy(() -> instance(properties)).withMessageContaining("NONE");
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), properties));
	}

}
