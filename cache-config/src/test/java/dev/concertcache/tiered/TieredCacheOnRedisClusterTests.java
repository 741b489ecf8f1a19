package dev.concertcache.tiered;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.lettuce.core.event.DefaultEventBus;
import io.lettuce.core.resource.DefaultClientResources;
import reactor.core.scheduler.Schedulers;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.concertcache.testsupport.RedisCluster;
import dev.concertcache.testsupport.Replication;
import dev.concertcache.tiered.TieredCache.Source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The cache on a real Redis Cluster (3 primaries, 3 replicas), configured by its node list alone: the two-tier read
 * path, eviction and invalidation across instances, a primary killed mid-test with an invalidation its replica
 * never received, and the node holding the invalidation stream restarted (ADR 0035). One cluster for the class:
 * starting one takes seconds.
 */
class TieredCacheOnRedisClusterTests {

	private static final Item OLD = new Item(1, "old");

	private static final Item NEW = new Item(1, "new");

	private static final Duration FEED_MAX_LAG = Duration.ofMillis(750);

	private static RedisCluster cluster;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	@BeforeAll
	static void startCluster() {
		cluster = new RedisCluster().start();
	}

	@AfterAll
	static void stopCluster() {
		cluster.close();
	}

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
	}

	@Test
	void aKeyIsLoadedOnceThenServedFromL1HereAndFromRedisOnAnotherInstance() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheUnderTest<Long, Item> onA = instance(properties).cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = instance(properties).cache("items", Long.class, Item.class);
		CountingLoader loader = new CountingLoader();

		assertThat(onA.lookup(1L, loader.returning(OLD)).source()).isEqualTo(Source.LOADER);
		assertThat(onA.lookup(1L, loader.returning(OLD)).source()).isEqualTo(Source.L1);
		assertThat(onB.lookup(1L, loader.returning(OLD))).satisfies((lookup) -> {
			assertThat(lookup.value()).contains(OLD);
			assertThat(lookup.source()).isEqualTo(Source.L2);
		});
		assertThat(loader.calls()).isEqualTo(1);
	}

	@Test
	void anEvictionOnOneInstanceReachesTheOthersL1AndAnEvictAllMovesEveryInstanceToTheNextGeneration() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> itemsOnB = b.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> pagesOnB = b.cache("pages", Long.class, Item.class);
		for (long key = 1; key <= 20; key++) {
			itemsOnB.get(key, new CountingLoader().returning(OLD));
			pagesOnB.get(key, new CountingLoader().returning(OLD));
		}

		a.cache("items", Long.class, Item.class).evict(7L);
		await().atMost(Duration.ofSeconds(5)).until(() -> !itemsOnB.isInL1(7L));
		assertThat(itemsOnB.isInL1(8L)).isTrue();
		assertThat(itemsOnB.get(7L, new CountingLoader().returning(NEW))).contains(NEW);

		String before = pagesOnB.redisKey(3L);
		a.cache("pages", Long.class, Item.class).evictAll();
		await().atMost(Duration.ofSeconds(5)).until(() -> !pagesOnB.isInL1(3L));
		assertThat(pagesOnB.redisKey(3L)).isNotEqualTo(before);
		CountingLoader loader = new CountingLoader();
		assertThat(pagesOnB.get(3L, loader.returning(NEW))).contains(NEW);
		assertThat(loader.calls()).isEqualTo(1);
	}

	@Test
	void aTombstoneLostWithAKilledPrimaryDoesNotBringTheOldValueBackAndAfterItsRestartReadsGoOn() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		// A key on a primary that holds neither the stream nor the generation counter: only its tombstone is lost.
		onA.get(0L, new CountingLoader().returning(OLD));
		long key = keyOffStreamAndCounter(properties, onA, "items");
		RedisCluster.Node primary = cluster.primaryFor(onA.redisKey(key));
		RedisCluster.Node replica = cluster.replicaOf(primary);
		onA.get(key, new CountingLoader().returning(OLD));
		assertThat(onB.lookup(key, new CountingLoader().returning(OLD)).source()).isEqualTo(Source.L2);
		cutOff(primary, replica);

		onA.evict(key);
		await().atMost(Duration.ofSeconds(5)).until(() -> !onB.isInL1(key));
		assertThat(onA.get(key, new CountingLoader().returning(NEW))).contains(NEW);
		assertThat(onB.get(key, new CountingLoader().returning(NEW))).contains(NEW);
		long handledOnA = a.manager.failovers().handled();
		long handledOnB = b.manager.failovers().handled();
		long generation = Long.parseLong(a.redis.opsForValue().get(properties.getKeyPrefix() + ":v1:items:generation"));
		String oldKey = onA.redisKey(key);
		long killedAt = System.nanoTime();
		cluster.killPrimary(primary);
		long promotedAfter = (System.nanoTime() - killedAt) / 1_000_000;
		// The promoted replica holds the old value without its tombstone, as asynchronous replication allows.
		assertThat(replica.command("GET", oldKey)).contains("old");

		await().atMost(Duration.ofSeconds(10))
			.until(() -> a.manager.failovers().handled() > handledOnA && b.manager.failovers().handled() > handledOnB);
		long handledAfter = (System.nanoTime() - killedAt) / 1_000_000;
		System.out.println("Failover: replica promoted " + promotedAfter + " ms after the kill, generations moved "
				+ handledAfter + " ms after it");
		// Past the L1 time to live: the reads go to Redis, which serves the old value under the old generation.
		a.ticker.advance(Duration.ofMinutes(1));
		b.ticker.advance(Duration.ofMinutes(1));
		for (CacheUnderTest<Long, Item> cache : List.of(onA, onB)) {
			assertThat(cache.get(key, new CountingLoader().returning(NEW))).contains(NEW);
		}
		assertThat(Long.parseLong(a.redis.opsForValue().get(properties.getKeyPrefix() + ":v1:items:generation")))
			.isGreaterThan(generation);

		cluster.restart(primary);
		assertThat(primary.isPrimary()).isFalse();
		Item newer = new Item(1, "newer");
		onA.evict(key);
		await().atMost(Duration.ofSeconds(5)).until(() -> !onB.isInL1(key));
		assertThat(onB.get(key, new CountingLoader().returning(newer))).contains(newer);
		assertThat(onA.get(key, new CountingLoader().returning(newer))).contains(newer);
	}

	@Test
	void aFailoverOfAPrimaryWithoutTheStreamMovesEveryGenerationButKeepsEveryInstancesL1() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		long key = keyOffStreamAndCounter(properties, onA, "items");
		RedisCluster.Node primary = cluster.primaryFor(onA.redisKey(key));
		long elsewhere = keyOff(onA, primary);
		for (long each : List.of(key, elsewhere)) {
			onA.get(each, new CountingLoader().returning(OLD));
			onB.get(each, new CountingLoader().returning(OLD));
		}
		long handledOnA = a.manager.failovers().handled();
		long handledOnB = b.manager.failovers().handled();
		String before = onA.redisKey(key);

		cluster.killPrimary(primary);
		try {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> a.manager.failovers().handled() > handledOnA && b.manager.failovers().handled() > handledOnB);
			// The instance that moved the generations announced it; the other one has heard it.
			await().atMost(Duration.ofSeconds(5))
				.until(() -> a.count("tiered.cache.invalidations.received", "cache", "items")
						+ b.count("tiered.cache.invalidations.received", "cache", "items") >= 1);

			CountingLoader loader = new CountingLoader();
			for (CacheUnderTest<Long, Item> cache : List.of(onA, onB)) {
				for (long each : List.of(key, elsewhere)) {
					assertThat(cache.lookup(each, loader.returning(NEW))).satisfies((lookup) -> {
						assertThat(lookup.value()).contains(OLD);
						assertThat(lookup.source()).isEqualTo(Source.L1);
					});
				}
			}
			assertThat(loader.calls()).isZero();
			// What Redis holds is not read again: the values are under a new generation.
			assertThat(onA.redisKey(key)).isNotEqualTo(before);
			assertThat(onB.redisKey(key)).isEqualTo(onA.redisKey(key));
		}
		finally {
			cluster.restart(primary);
		}
	}

	@Test
	void aGenerationMoveThePromotedReplicaRefusesIsRetriedAsAMoveAndEveryInstanceKeepsItsL1() {
		CacheInstance.Settings properties = CacheInstance.properties();
		while (counterOf(properties, "items").address()
			.equals(cluster.primaryFor(properties.keyPrefix() + ":invalidations").address())) {
			properties = CacheInstance.properties();
		}
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		RedisCluster.Node counter = counterOf(properties, "items");
		RedisCluster.Node replica = cluster.replicaOf(counter);
		long key = keyOff(onA, counter);
		onA.get(key, new CountingLoader().returning(OLD));
		onB.get(key, new CountingLoader().returning(OLD));
		String before = onA.redisKey(key);
		long handledOnA = a.manager.failovers().handled();
		long handledOnB = b.manager.failovers().handled();
		// The promoted replica refuses every script, the generation moves included, until told otherwise.
		for (CacheInstance instance : List.of(a, b)) {
			instance.manager.failovers().beforeFailoverMove(() -> replica.command("ACL", "SETUSER", "default", "-eval", "-evalsha"));
		}

		cluster.killPrimary(counter);
		try {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> a.manager.failovers().handled() > handledOnA && b.manager.failovers().handled() > handledOnB);
			assertThat(a.manager.pending().isEmpty()).isFalse();
			assertThat(onA.isInL1(key)).isTrue();
			assertThat(onB.isInL1(key)).isTrue();

			replica.command("ACL", "SETUSER", "default", "+@all");
			await().atMost(Duration.ofSeconds(10))
				.until(() -> a.manager.pending().isEmpty() && b.manager.pending().isEmpty());

			assertThat(onA.redisKey(key)).isNotEqualTo(before);
			CountingLoader loader = new CountingLoader();
			for (CacheUnderTest<Long, Item> cache : List.of(onA, onB)) {
				assertThat(cache.lookup(key, loader.returning(NEW))).satisfies((lookup) -> {
					assertThat(lookup.value()).contains(OLD);
					assertThat(lookup.source()).isEqualTo(Source.L1);
				});
			}
			assertThat(loader.calls()).isZero();
		}
		finally {
			replica.command("ACL", "SETUSER", "default", "+@all");
			cluster.restart(counter);
		}
	}

	@Test
	void aFailoverOfThePrimaryOfTheStreamClearsEveryInstancesL1WithoutAChangeFeed() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		RedisCluster.Node stream = cluster.primaryFor(properties.getKeyPrefix() + ":invalidations");
		long key = keyOff(onA, stream);
		onA.get(key, new CountingLoader().returning(OLD));
		onB.get(key, new CountingLoader().returning(OLD));
		long handledOnA = a.manager.failovers().handled();
		long handledOnB = b.manager.failovers().handled();
		// The listeners would flush L1 on finding another run_id behind the stream: parked before they look, as a
		// listener whose connection was not dropped (a partition) would not look at all.
		CountDownLatch checked = new CountDownLatch(1);
		for (CacheInstance instance : List.of(a, b)) {
			instance.manager.listener().beforeServerCheck(() -> {
				try {
					checked.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			});
		}

		cluster.killPrimary(stream);
		try {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> a.manager.failovers().handled() > handledOnA && b.manager.failovers().handled() > handledOnB);

			// Its replica may lack the last announcements, of which an instance would never hear.
			assertThat(onA.isInL1(key)).isFalse();
			assertThat(onB.isInL1(key)).isFalse();
		}
		finally {
			checked.countDown();
			cluster.restart(stream);
		}
	}

	@Test
	void aFailoverOfThePrimaryOfTheStreamKeepsL1WhereNothingHeardIsLostAndTheChangeFeedInvalidatesAgainWhatThePromotedReplicaLacks() {
		Followed fleet = twoInstancesFollowingAFeed();
		long changed = 1;
		long kept = 2;
		long invalidatedBefore = 3;
		for (CacheUnderTest<Long, Item> cache : List.of(fleet.onA, fleet.onB)) {
			for (long key : List.of(changed, kept, invalidatedBefore)) {
				cache.get(key, new CountingLoader().returning(OLD));
			}
		}
		fleet.onB.evict(invalidatedBefore);
		await().atMost(Duration.ofSeconds(5)).until(() -> !fleet.onA.isInL1(invalidatedBefore));
		for (CacheUnderTest<Long, Item> cache : List.of(fleet.onA, fleet.onB)) {
			cache.get(invalidatedBefore, new CountingLoader().returning(NEW));
		}
		assertThat(fleet.feed.landed()).isTrue();
		String keptByTheReplica = fleet.feed.checkpoint;
		RedisCluster.Node stream = cluster.primaryFor(fleet.streamKey());
		cutOff(stream, cluster.replicaOf(stream));
		// Instance b reads nothing more from the old primary (a listener reconnecting, say).
		fleet.b.manager.listener().stop();
		// The feed lands a change: its tombstone and announcement, then its checkpoint and confirmation, are lost.
		fleet.onA.evict(changed);
		assertThat(fleet.feed.landed()).isTrue();
		assertThat(fleet.feed.confirm()).isTrue();

		try {
			fleet.failOver(stream);
			assertThat(fleet.feed.confirm()).as("the promoted replica holds an earlier checkpoint").isFalse();
			assertThat(fleet.a.manager.changeFeedCheckpoint()).isEqualTo(keptByTheReplica);
			// As the binary log's reader does: read again from that checkpoint, invalidating again what followed it.
			fleet.feed.readFromCheckpoint();
			fleet.onA.evict(changed);
			assertThat(fleet.feed.landed()).isTrue();
			awaitConfirmed(fleet.feed, fleet.a, fleet.b);

			CountingLoader loader = new CountingLoader();
			assertThat(fleet.onB.get(changed, loader.returning(NEW))).contains(NEW);
			assertThat(loader.calls()).isEqualTo(1);
			assertThat(fleet.onB.lookup(kept, loader.returning(NEW))).satisfies((lookup) -> {
				assertThat(lookup.value()).contains(OLD);
				assertThat(lookup.source()).isEqualTo(Source.L1);
			});
			assertThat(loader.calls()).isEqualTo(1);
			// Instance a had read messages the promoted replica lacks: that tail is gone, so it flushed its L1.
			assertThat(fleet.onA.isInL1(kept)).isFalse();
			assertThat(fleet.onA.isInL1(invalidatedBefore)).isFalse();
		}
		finally {
			cluster.restart(stream);
		}
	}

	@Test
	void aPromotedReplicaThatLacksTheLastMessageReadMakesTheListenerFlushL1AndHearItsOwnMessages() {
		Followed fleet = twoInstancesFollowingAFeed();
		long changed = 1;
		long heard = 2;
		for (CacheUnderTest<Long, Item> cache : List.of(fleet.onA, fleet.onB)) {
			cache.get(changed, new CountingLoader().returning(OLD));
		}
		fleet.onB.get(heard, new CountingLoader().returning(OLD));
		RedisCluster.Node stream = cluster.primaryFor(fleet.streamKey());
		cutOff(stream, cluster.replicaOf(stream));
		// The old primary's clock is two minutes ahead of the replica's: its last messages, which the replica never
		// gets, have later ids than any the promoted replica gives soon after, and numbers it gives again.
		stream.command("EVAL", """
				for i = 1, 100 do
				  local seq = redis.call('INCR', KEYS[2])
				  redis.call('XADD', KEYS[1], ARGV[1] .. '-' .. i, 'cache', 'items', 'key', ARGV[2], 'gen', '0',
				    'seq', seq, 'origin', 'ahead', 'sent', ARGV[1])
				end
				""", "2", fleet.streamKey(), InvalidationStream.sequenceKey(fleet.streamKey()),
				String.valueOf(System.currentTimeMillis() + Duration.ofMinutes(2).toMillis()), String.valueOf(heard));
		await().atMost(Duration.ofSeconds(5)).until(() -> !fleet.onB.isInL1(heard));
		fleet.b.manager.listener().stop();
		fleet.onA.evict(changed);
		assertThat(fleet.feed.landed()).isTrue();

		try {
			fleet.failOver(stream);
			fleet.feed.readFromCheckpoint();
			fleet.onA.evict(changed);
			assertThat(fleet.feed.landed()).isTrue();
			awaitConfirmed(fleet.feed, fleet.a, fleet.b);

			CountingLoader loader = new CountingLoader();
			assertThat(fleet.onB.get(changed, loader.returning(NEW))).contains(NEW);
			assertThat(loader.calls()).isEqualTo(1);
		}
		finally {
			cluster.restart(stream);
		}
	}

	@Test
	void whileAPrimaryIsDownWithoutAReplicaToPromoteTheOtherPrimariesServeValuesAndInvalidations() {
		CacheInstance.Settings properties = CacheInstance.properties();
		RedisCluster.Node stream = cluster.primaryFor(properties.keyPrefix() + ":invalidations");
		String name = cacheWhoseCounterIsOn(properties, stream);
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache(name, Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache(name, Long.class, Item.class);
		long evicted = keyOff(onA, stream);
		RedisCluster.Node keys = cluster.primaryFor(onA.redisKey(evicted));
		long stored = evicted + 1;
		while (!cluster.primaryFor(onA.redisKey(stored)).address().equals(keys.address())) {
			stored++;
		}
		RedisCluster.Node down = cluster.nodes()
			.stream()
			.filter((node) -> node.isRunning() && node.isPrimary() && !node.address().equals(stream.address())
					&& !node.address().equals(keys.address()))
			.findFirst()
			.orElseThrow();
		RedisCluster.Node replica = cluster.replicaOf(down);
		onB.get(evicted, new CountingLoader().returning(OLD));
		onA.get(stored, new CountingLoader().returning(OLD));

		replica.command("CONFIG", "SET", "cluster-replica-no-failover", "yes");
		down.kill();
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> isFailed(stream, down));
			onA.evict(evicted);
			await().atMost(Duration.ofSeconds(5)).until(() -> !onB.isInL1(evicted));
			CountingLoader loader = new CountingLoader();
			assertThat(onB.lookup(stored, loader.returning(NEW))).satisfies((lookup) -> {
				assertThat(lookup.value()).contains(OLD);
				assertThat(lookup.source()).isEqualTo(Source.L2);
			});
			assertThat(onB.get(evicted, loader.returning(NEW))).contains(NEW);
			assertThat(loader.calls()).isEqualTo(1);
		}
		finally {
			replica.command("CONFIG", "SET", "cluster-replica-no-failover", "no");
			cluster.restart(down);
		}
	}

	@Test
	void afterTheNodeOfTheInvalidationStreamRestartsInvalidationsReachTheOtherInstanceAgain() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		onB.get(1L, new CountingLoader().returning(OLD));

		cluster.restart(cluster.primaryFor(properties.getKeyPrefix() + ":invalidations"));
		await().atMost(Duration.ofSeconds(20)).until(b.manager::isListening);
		onB.get(1L, new CountingLoader().returning(OLD));
		assertThat(onB.isInL1(1L)).isTrue();

		a.cache("items", Long.class, Item.class).evict(1L);
		await().atMost(Duration.ofSeconds(5)).until(() -> !onB.isInL1(1L));
		assertThat(onB.get(1L, new CountingLoader().returning(NEW))).contains(NEW);
	}

	@Test
	void aReadWhileTheWriterClearsL1AfterRedisRefusedItsEvictAllGoesToTheLoaderAndKeepsNothingOld() {
		// No retry of the pending evict-all during the test: each one clears L1 again, which is not this test's subject.
		CacheInstance.Settings properties = CacheInstance.properties(
				(settings) -> settings.retryInterval(Duration.ofHours(1)));
		RedisCluster.Node stream = cluster.primaryFor(properties.getKeyPrefix() + ":invalidations");
		// The counter on another primary: the generation moves, its announcement fails (as in a failover under load).
		String name = cacheWhoseCounterIsNotOn(properties, stream);
		CacheUnderTest<Long, Item> pages = instance(properties).cache(name, Long.class, Item.class);
		long key = keyOff(pages, stream);
		pages.get(key, new CountingLoader().returning(OLD));
		CountingLoader loader = new CountingLoader();
		List<Item> readRightAfterL1 = new ArrayList<>();
		pages.afterEvictionInL1(() -> readRightAfterL1.add(pages.get(key, loader.returning(NEW)).orElseThrow()));

		stream.kill();
		try {
			pages.evictAll();
			pages.afterEvictionInL1(() -> {
			});

			assertThat(readRightAfterL1).containsExactly(NEW);
			assertThat(pages.get(key, loader.returning(NEW))).contains(NEW);
			assertThat(loader.calls()).isEqualTo(1);
		}
		finally {
			cluster.restart(stream);
		}
	}

	@Test
	void anEvictAllWhoseAnnouncementIsLostWithTheStreamsPrimaryReachesAnInstanceThatHearsNothingWithinMaxSilence() {
		CacheInstance.Settings properties = CacheInstance.properties();
		RedisCluster.Node stream = cluster.primaryFor(properties.getKeyPrefix() + ":invalidations");
		String name = cacheWhoseCounterIsNotOn(properties, stream);
		CacheUnderTest<Long, Item> onWriter = instance(properties).cache(name, Long.class, Item.class);
		CacheInstance reader = instance(properties);
		CacheUnderTest<Long, Item> onReader = reader.cache(name, Long.class, Item.class);
		long key = keyOff(onReader, stream);
		onReader.get(key, new CountingLoader().returning(OLD));

		stream.kill();
		try {
			// As the binary log's capture does: the counter moves, the announcement fails, the capture retries.
			assertThatExceptionOfType(InvalidationFailedException.class).isThrownBy(onWriter::invalidateAll);
			// The reader hears nothing from the dead stream: past max-silence its L1 entry is read through again.
			reader.watermark.advance(Duration.ofMinutes(2));

			CountingLoader loader = new CountingLoader();
			assertThat(onReader.get(key, loader.returning(NEW))).contains(NEW);
			assertThat(loader.calls()).isEqualTo(1);
		}
		finally {
			cluster.restart(stream);
		}
	}

	@Test
	void anEvictAllWhoseCounterIsOnADeadPrimaryIsPendingOnEveryInstanceThatHearsOfItUntilItLands() {
		CacheInstance.Settings properties = CacheInstance.properties();
		RedisCluster.Node stream = cluster.primaryFor(properties.getKeyPrefix() + ":invalidations");
		String name = cacheWhoseCounterIsNotOn(properties, stream);
		RedisCluster.Node counter = counterOf(properties, name);
		CacheUnderTest<Long, Item> onWriter = instance(properties).cache(name, Long.class, Item.class);
		CacheInstance reader = instance(properties);
		CacheUnderTest<Long, Item> onReader = reader.cache(name, Long.class, Item.class);
		long key = keyOff(onReader, counter);
		onReader.get(key, new CountingLoader().returning(OLD));

		counter.kill();
		try {
			onWriter.evictAll();
			// Heard, not waited out: the replica is promoted within seconds, and the failover then moves the
			// generation anyway.
			await().atMost(Duration.ofSeconds(1))
				.until(() -> reader.count("tiered.cache.invalidations.received", "cache", name) >= 1);
			assertThat(onReader.isInL1(key)).isFalse();

			CountingLoader loader = new CountingLoader();
			assertThat(onReader.get(key, loader.returning(NEW))).contains(NEW);
			assertThat(onReader.get(key, loader.returning(NEW))).contains(NEW);
			assertThat(reader.manager.pending().covers(name, PendingEvictions.ALL)).isTrue();
		}
		finally {
			cluster.restart(counter);
		}
	}

	@Test
	void aSecondWriteOfAKeyWhoseEvictionHasNotLandedIsReadFreshOnAnotherInstanceThatHeardOnlyTheFirst() {
		// No retry within the test: a failed retry clears its key from L1, but a pass stops at its first failure,
		// so under load most pending keys are not retried for the whole outage.
		CacheInstance.Settings properties = CacheInstance
			.properties((builder) -> builder.retryInterval(Duration.ofHours(1)));
		CacheUnderTest<Long, Item> onWriter = instance(properties).cache("items", Long.class, Item.class);
		CacheInstance reader = instance(properties);
		CacheUnderTest<Long, Item> onReader = reader.cache("items", Long.class, Item.class);
		long key = keyOffStreamAndCounter(properties, onReader, "items");
		RedisCluster.Node primary = cluster.primaryFor(onReader.redisKey(key));
		onReader.get(key, new CountingLoader().returning(OLD));

		primary.kill();
		try {
			onWriter.evict(key);
			await().atMost(Duration.ofSeconds(1))
				.until(() -> reader.count("tiered.cache.invalidations.received", "cache", "items") >= 1);
			assertThat(onReader.get(key, new CountingLoader().returning(NEW))).contains(NEW);

			// Within max-silence of the first: not announced again, so the reader hears nothing of it.
			onWriter.evict(key);
			Item newer = new Item(1, "newer");
			assertThat(onReader.get(key, new CountingLoader().returning(newer))).contains(newer);
			assertThat(reader.count("tiered.cache.invalidations.received", "cache", "items")).isEqualTo(1.0);
		}
		finally {
			cluster.restart(primary);
		}
	}

	@Test
	void anInvalidationThatDoesNotLandIsNotReadBackFromRedisByTheInstanceThatMadeIt() {
		CacheInstance.Settings properties = CacheInstance.properties();
		RedisCluster.Node stream = cluster.primaryFor(properties.getKeyPrefix() + ":invalidations");
		String name = cacheWhoseCounterIsNotOn(properties, stream);
		RedisCluster.Node counter = counterOf(properties, name);
		// As the binary log's capture invalidates: the value on a live primary, the counter on the one killed.
		CacheUnderTest<Long, Item> capture = instance(properties).cache(name, Long.class, Item.class);
		long key = keyOff(capture, counter);
		capture.get(key, new CountingLoader().returning(OLD));

		counter.kill();
		try {
			assertThatExceptionOfType(InvalidationFailedException.class).isThrownBy(() -> capture.invalidate(key));

			CountingLoader loader = new CountingLoader();
			assertThat(capture.get(key, loader.returning(NEW))).contains(NEW);
			assertThat(capture.get(key, loader.returning(NEW))).contains(NEW);
			assertThat(loader.calls()).isEqualTo(2);
		}
		finally {
			cluster.restart(counter);
		}
	}

	@Test
	void anEvictionThatDoesNotLandIsAnnouncedOncePerMaxSilenceNotAtEveryRetry() {
		CacheInstance.Settings properties = CacheInstance.properties();
		RedisCluster.Node stream = cluster.primaryFor(properties.getKeyPrefix() + ":invalidations");
		String name = cacheWhoseCounterIsNotOn(properties, stream);
		RedisCluster.Node counter = counterOf(properties, name);
		CacheInstance writer = instance(properties);
		CacheUnderTest<Long, Item> onWriter = writer.cache(name, Long.class, Item.class);
		CacheInstance reader = instance(properties);
		reader.cache(name, Long.class, Item.class);

		counter.kill();
		try {
			onWriter.evictAll();
			writer.manager.retry().retry();
			writer.manager.retry().retry();
			writer.ticker.advance(CacheInstance.MAX_SILENCE);
			writer.manager.retry().retry();
			// The stream keeps order: once the announcement after max-silence is in, every earlier one is too.
			await().atMost(Duration.ofSeconds(1))
				.until(() -> reader.count("tiered.cache.invalidations.received", "cache", name) >= 2);
			assertThat(reader.count("tiered.cache.invalidations.received", "cache", name)).isEqualTo(2);
		}
		finally {
			cluster.restart(counter);
		}
	}

	@Test
	void aReadAfterTheConnectionRoutesToAPromotedReplicaButBeforeTheGenerationsMoveGoesToTheLoader() throws Exception {
		CacheInstance.Settings properties = CacheInstance.properties();
		// Lettuce delivers its events on a thread of their own, after it routes by the new topology: parked here.
		ExecutorService events = Executors.newSingleThreadExecutor();
		CacheInstance a = CacheInstance.start(cluster, properties, DefaultClientResources.builder()
			.eventBus(new DefaultEventBus(Schedulers.fromExecutorService(events)))
			.build());
		this.closeables.add(a);
		this.closeables.add(events::shutdownNow);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		long chosen = keyOffStreamAndCounter(properties, onA, "items");
		RedisCluster.Node primary = cluster.primaryFor(onA.redisKey(chosen));
		RedisCluster.Node replica = cluster.replicaOf(primary);
		onA.get(chosen, new CountingLoader().returning(OLD));
		String oldKey = onA.redisKey(chosen);
		cutOff(primary, replica);
		onA.evict(chosen);
		CountDownLatch moved = new CountDownLatch(1);
		a.manager.failovers().beforeFailoverMove(() -> {
			try {
				moved.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});

		CountDownLatch eventsDelivered = new CountDownLatch(1);
		events.execute(() -> {
			try {
				eventsDelivered.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		cluster.killPrimary(primary);
		try {
			// The connection routes the key's slot to the promoted replica (old value, no tombstone); the topology
			// change event and the move wait.
			await().atMost(Duration.ofSeconds(10)).until(() -> "old".equals(valueNameIn(a, oldKey)));
			a.ticker.advance(Duration.ofMinutes(1));

			CountingLoader loader = new CountingLoader();
			assertThat(onA.get(chosen, loader.returning(NEW))).contains(NEW);
			assertThat(loader.calls()).isEqualTo(1);
		}
		finally {
			eventsDelivered.countDown();
			moved.countDown();
			cluster.restart(primary);
		}
	}

	@Test
	void aReadThatANodeRedirectsAfterAFailoverTheInstanceHasNotSeenGoesToTheLoaderAndTheFailoverIsThenHandled() {
		CacheInstance.Settings properties = CacheInstance.properties();
		// No periodic refresh within the test, no connection lost: only the redirect can tell the instance.
		CacheInstance a = CacheInstance.start(cluster, properties, DefaultClientResources.create(),
				Duration.ofHours(1));
		this.closeables.add(a);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		long chosen = keyOffStreamAndCounter(properties, onA, "items");
		RedisCluster.Node primary = cluster.primaryFor(onA.redisKey(chosen));
		RedisCluster.Node replica = cluster.replicaOf(primary);
		onA.get(chosen, new CountingLoader().returning(OLD));
		cutOff(primary, replica);
		onA.evict(chosen);
		long handled = a.manager.failovers().handled();

		// The replica takes the slots without the primary's last writes; the primary, alive, answers MOVED.
		replica.command("CLUSTER", "FAILOVER", "TAKEOVER");
		await().atMost(Duration.ofSeconds(10)).until(() -> replica.isPrimary() && !primary.isPrimary());
		assertThat(replica.command("GET", onA.redisKey(chosen))).contains("old");

		CountingLoader loader = new CountingLoader();
		assertThat(onA.get(chosen, loader.returning(NEW))).contains(NEW);
		assertThat(loader.calls()).isEqualTo(1);
		await().atMost(Duration.ofSeconds(5)).until(() -> a.manager.failovers().handled() > handled);
	}

	@Test
	void aKeyOfASlotBeingMigratedIsReadFromTheLoaderAndTheSlotsNewPrimaryIsThenHandledAsAFailover() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		RedisCluster.Node target = cluster.primaryFor(properties.getKeyPrefix() + ":invalidations");
		long chosen = keyOff(onA, target);
		RedisCluster.Node source = cluster.primaryFor(onA.redisKey(chosen));
		onA.get(chosen, new CountingLoader().returning(OLD));
		String slot = source.command("CLUSTER", "KEYSLOT", onA.redisKey(chosen)).trim();
		String sourceId = source.command("CLUSTER", "MYID").trim();
		String targetId = target.command("CLUSTER", "MYID").trim();
		long handled = a.manager.failovers().handled();

		// As redis-cli --cluster reshard does: the slot importing and migrating, its keys moved one by one.
		target.command("CLUSTER", "SETSLOT", slot, "IMPORTING", sourceId);
		source.command("CLUSTER", "SETSLOT", slot, "MIGRATING", targetId);
		List<String> migrate = new ArrayList<>(List.of("MIGRATE", "127.0.0.1", target.address().split(":")[1], "",
				"0", "5000", "KEYS"));
		migrate.addAll(source.command("CLUSTER", "GETKEYSINSLOT", slot, "1000").lines().toList());
		source.command(migrate.toArray(String[]::new));
		// Past the L1 time to live: the read goes to Redis, which answers ASK (the value moved, the slot not yet).
		a.ticker.advance(Duration.ofMinutes(1));
		CountingLoader loader = new CountingLoader();
		assertThat(onA.get(chosen, loader.returning(NEW))).contains(NEW);
		assertThat(loader.calls()).isEqualTo(1);

		for (RedisCluster.Node node : List.of(target, source)) {
			node.command("CLUSTER", "SETSLOT", slot, "NODE", targetId);
		}
		// A slot served by another primary is handled as a failover (ADR 0035): every generation moves.
		await().atMost(Duration.ofSeconds(5)).until(() -> a.manager.failovers().handled() > handled);
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		CacheInstance instance = CacheInstance.start(cluster, properties);
		this.closeables.add(instance);
		return instance;
	}

	/** A cache whose generation counter is on {@code node}. */
	private static String cacheWhoseCounterIsOn(CacheInstance.Settings properties, RedisCluster.Node node) {
		for (int i = 0;; i++) {
			String name = "pages" + i;
			if (counterOf(properties, name).address().equals(node.address())) {
				return name;
			}
		}
	}

	/** Whether {@code observer} holds {@code node} failed (FAIL, agreed by the primaries; not just PFAIL). */
	private static boolean isFailed(RedisCluster.Node observer, RedisCluster.Node node) {
		return observer.command("CLUSTER", "NODES")
			.lines()
			.filter((line) -> line.contains(" " + node.address() + "@"))
			.anyMatch((line) -> List.of(line.split(" ")[2].split(",")).contains("fail"));
	}

	/** A cache whose generation counter is on another primary than {@code node}. */
	private static String cacheWhoseCounterIsNotOn(CacheInstance.Settings properties, RedisCluster.Node node) {
		for (int i = 0;; i++) {
			String name = "pages" + i;
			if (!counterOf(properties, name).address().equals(node.address())) {
				return name;
			}
		}
	}

	/** Instances a and b following a test change feed on a, which has landed once and been heard by both. */
	private Followed twoInstancesFollowingAFeed() {
		CacheInstance.Settings properties = CacheInstance.properties((builder) -> builder.changeFeedMaxLag(FEED_MAX_LAG));
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		ChangeFeed feed = new ChangeFeed(a.manager);
		assertThat(feed.landed()).isTrue();
		awaitConfirmed(feed, a, b);
		return new Followed(properties, a, b, a.cache("items", Long.class, Item.class),
				b.cache("items", Long.class, Item.class), feed);
	}

	private record Followed(CacheInstance.Settings properties, CacheInstance a, CacheInstance b,
			CacheUnderTest<Long, Item> onA, CacheUnderTest<Long, Item> onB, ChangeFeed feed) {

		String streamKey() {
			return this.properties.keyPrefix() + ":invalidations";
		}

		/**
		 * Kills the stream's primary and waits until both instances handled the failover, which took longer than
		 * max-lag; then starts b's listener again.
		 */
		void failOver(RedisCluster.Node stream) {
			long handledOnA = this.a.manager.failovers().handled();
			long handledOnB = this.b.manager.failovers().handled();
			cluster.killPrimary(stream);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> this.a.manager.failovers().handled() > handledOnA
						&& this.b.manager.failovers().handled() > handledOnB);
			this.a.watermark.advance(FEED_MAX_LAG.plusMillis(1));
			this.b.watermark.advance(FEED_MAX_LAG.plusMillis(1));
			this.b.manager.listener().start();
		}

	}

	/** Has the feed confirm until every instance heard a confirmation no older than max-lag. */
	private static void awaitConfirmed(ChangeFeed feed, CacheInstance... instances) {
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			assertThat(feed.confirm()).isTrue();
			return List.of(instances).stream().allMatch((instance) -> {
				Duration silence = instance.manager.getChangeFeedSilence();
				return silence != null && silence.compareTo(FEED_MAX_LAG) <= 0;
			});
		});
	}

	/** A change feed as the binary log's reader is one (ADR 0037): numbered positions, a checkpoint moved to each. */
	private static final class ChangeFeed {

		private final DefaultTieredCacheManager manager;

		private String checkpoint;

		private int position;

		ChangeFeed(DefaultTieredCacheManager manager) {
			this.manager = manager;
		}

		/** Moves the checkpoint to the next position, after that position's invalidations landed. */
		boolean landed() {
			String next = "position-" + (++this.position);
			if (!this.manager.changeFeedLanded(this.checkpoint, next)) {
				return false;
			}
			this.checkpoint = next;
			return true;
		}

		boolean confirm() {
			return this.manager.changeFeedCaughtUp(Duration.ZERO, this.checkpoint);
		}

		void readFromCheckpoint() {
			this.checkpoint = this.manager.changeFeedCheckpoint();
		}

	}

	/** The primary that holds {@code cache}'s generation counter. */
	private static RedisCluster.Node counterOf(CacheInstance.Settings properties, String cache) {
		return cluster.primaryFor(properties.getKeyPrefix() + ":v1:" + cache + ":generation");
	}

	/**
	 * A key of {@code cache} (named {@code name}) on a primary that holds neither the invalidation stream nor the
	 * cache's generation counter: killing that primary loses only the key's own writes.
	 */
	private static long keyOffStreamAndCounter(CacheInstance.Settings properties, CacheUnderTest<Long, Item> cache,
			String name) {
		List<String> others = List.of(cluster.primaryFor(properties.getKeyPrefix() + ":invalidations").address(),
				counterOf(properties, name).address());
		long key = 1;
		while (others.contains(cluster.primaryFor(cache.redisKey(key)).address())) {
			key++;
		}
		return key;
	}

	/** A key of {@code cache} whose value is not on {@code node}. */
	private static long keyOff(CacheUnderTest<Long, Item> cache, RedisCluster.Node node) {
		long key = 1;
		while (cluster.primaryFor(cache.redisKey(key)).address().equals(node.address())) {
			key++;
		}
		return key;
	}

	/** The name in the value {@code redisKey} holds as the instance's connection reads it, {@code null} if none. */
	private static String valueNameIn(CacheInstance instance, String redisKey) {
		try {
			String raw = instance.redis.opsForValue().get(redisKey);
			return (raw != null && raw.contains("\"old\"")) ? "old" : null;
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	/** Once {@code replica} has caught up, it stops receiving: it cannot authenticate when it reconnects. */
	private static void cutOff(RedisCluster.Node primary, RedisCluster.Node replica) {
		await().atMost(Duration.ofSeconds(10)).until(() -> replicated(primary, replica));
		replica.command("CONFIG", "SET", "masterauth", "cut-off");
		primary.command("CLIENT", "KILL", "TYPE", "replica");
		await().atMost(Duration.ofSeconds(10))
			.until(() -> replica.command("INFO", "replication").contains("master_link_status:down"));
	}

	private static boolean replicated(RedisCluster.Node primary, RedisCluster.Node replica) {
		return Replication.caughtUp(primary.command("INFO", "replication"), replica.command("INFO", "replication"));
	}

}
