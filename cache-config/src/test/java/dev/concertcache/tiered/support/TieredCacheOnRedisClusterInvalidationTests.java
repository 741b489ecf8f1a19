package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;

import dev.concertcache.testsupport.CommandTrap;
import dev.concertcache.testsupport.RedisCluster;
import dev.concertcache.tiered.InvalidationFailedException;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.gate.PendingEvictions;
import dev.concertcache.tiered.log.InvalidationStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Invalidation across instances on a real Redis Cluster when the primary of the invalidation stream fails over or
 * restarts, and when an eviction does not land because the primary of its key or generation counter is down
 * (ADR 0039).
 */
class TieredCacheOnRedisClusterInvalidationTests extends RedisClusterTestSupport {

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
		long handledOnA = a.failoversHandled();
		long handledOnB = b.failoversHandled();
		// The listeners would flush L1 on finding another run_id behind the stream: parked before they look, as a
		// listener whose connection was not dropped (a partition) would not look at all.
		CountDownLatch checked = new CountDownLatch(1);
		List<CommandTrap.Rule> serverChecks = List.of(a, b)
			.stream()
			.map((instance) -> instance.commands.always(TieredCommands.listenersServerCheck(), () -> Latches.park(checked)))
			.toList();

		cluster.killPrimary(stream);
		try {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> a.failoversHandled() > handledOnA && b.failoversHandled() > handledOnB);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> serverChecks.stream().allMatch((check) -> check.fired().get() > 0));

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
	void whileTheStreamsPrimaryIsDownAnotherInstancesWriteIsServedOldForAtMostTheDisconnectMaxAge() {
		CacheInstance.Settings properties = CacheInstance
			.properties((settings) -> settings.disconnectMaxAge(Duration.ofMillis(50)));
		RedisCluster.Node stream = cluster.primaryFor(properties.getKeyPrefix() + ":invalidations");
		String name = cacheWhoseCounterIsNotOn(properties, stream);
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache(name, Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache(name, Long.class, Item.class);
		long key = keyOffStreamAndCounter(properties, onA, name);
		onB.get(key, new CountingLoader().returning(OLD));
		assertThat(b.manager.isListening()).isTrue();
		// No replica takes over: the stream stays out of reach for the whole test, however slow it runs.
		List<RedisCluster.Node> replicas = cluster.replicasOf(stream);
		replicas.forEach(RedisCluster.Node::kill);
		stream.kill();
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> !b.manager.isListening());
			// The key's tombstone lands on its own primary; its announcement cannot be appended (A keeps it pending).
			onA.evict(key);
			b.watermark.advance(Duration.ofMillis(50));
			assertThat(onB.get(key, new CountingLoader().returning(NEW))).as("within the disconnect max-age: L1")
				.contains(OLD);
			b.watermark.advance(Duration.ofMillis(1));

			assertThat(onB.lookup(key, new CountingLoader().returning(NEW))).satisfies((lookup) -> {
				assertThat(lookup.value()).as("past it: Redis, then the loader: %s", lookup).contains(NEW);
				assertThat(lookup.source()).isEqualTo(Source.LOADER);
			});
		}
		finally {
			replicas.forEach(RedisCluster.Node::start);
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
		ManagerInternals.listener(fleet.b.manager).stop();
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
		ManagerInternals.listener(fleet.b.manager).stop();
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

		stream.kill();
		try {
			pages.evictAll();

			// The first read after L1 is cleared: the pending evict-all sends it to the loader, not to Redis' old value.
			assertThat(pages.get(key, loader.returning(NEW))).contains(NEW);
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
			assertThat(ManagerInternals.pending(reader.manager).covers(name, PendingEvictions.ALL)).isTrue();
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
			ManagerInternals.retry(writer.manager).retry();
			ManagerInternals.retry(writer.manager).retry();
			writer.ticker.advance(CacheInstance.MAX_SILENCE);
			ManagerInternals.retry(writer.manager).retry();
			// The stream keeps order: once the announcement after max-silence is in, every earlier one is too.
			await().atMost(Duration.ofSeconds(1))
				.until(() -> reader.count("tiered.cache.invalidations.received", "cache", name) >= 2);
			assertThat(reader.count("tiered.cache.invalidations.received", "cache", name)).isEqualTo(2);
		}
		finally {
			cluster.restart(counter);
		}
	}

}
