package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.lettuce.core.event.DefaultEventBus;
import io.lettuce.core.resource.DefaultClientResources;
import reactor.core.scheduler.Schedulers;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.concertcache.testsupport.RedisCluster;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.autoconfigure.redis.TieredCacheRedisClientAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The cache on a real Redis Cluster, configured by its node list alone: the two-tier read path, eviction across
 * instances, a primary killed mid-test with a tombstone or a generation move its replica never received, a primary
 * down without a replica, and reads that a failover or a slot migration redirects (ADR 0039).
 */
class TieredCacheOnRedisClusterTests extends RedisClusterTestSupport {

	@Test
	void theStartUpCheckRefusesAClusterOneOfWhosePrimariesSavesSnapshots() {
		RedisCluster.Node primary = cluster.nodes()
			.stream()
			.filter((node) -> node.isRunning() && node.isPrimary())
			.findFirst()
			.orElseThrow();
		ApplicationContextRunner contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(TieredCacheRedisClientAutoConfiguration.class,
					DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.cluster.nodes=" + cluster.nodesProperty(),
					"spring.data.redis.timeout=2s");
		contextRunner.run((context) -> assertThat(context).hasNotFailed());
		primary.command("CONFIG", "SET", "save", "60 1");
		try {
			contextRunner.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining(primary.address() + ": RDB snapshots (save \"60 1\")"));
		}
		finally {
			primary.command("CONFIG", "SET", "save", "");
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
		long handledOnA = a.failoversHandled();
		long handledOnB = b.failoversHandled();
		long generation = Long.parseLong(a.redis.opsForValue().get(properties.getKeyPrefix() + ":v1:items:generation"));
		String oldKey = onA.redisKey(key);
		long killedAt = System.nanoTime();
		cluster.killPrimary(primary);
		long promotedAfter = (System.nanoTime() - killedAt) / 1_000_000;
		// The promoted replica holds the old value without its tombstone, as asynchronous replication allows.
		assertThat(replica.command("GET", oldKey)).contains("old");

		await().atMost(Duration.ofSeconds(10))
			.until(() -> a.failoversHandled() > handledOnA && b.failoversHandled() > handledOnB);
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
		long handledOnA = a.failoversHandled();
		long handledOnB = b.failoversHandled();
		String before = onA.redisKey(key);

		cluster.killPrimary(primary);
		try {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> a.failoversHandled() > handledOnA && b.failoversHandled() > handledOnB);
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
		long handledOnA = a.failoversHandled();
		long handledOnB = b.failoversHandled();
		// The promoted replica refuses every script, the generation moves included, until told otherwise.
		for (CacheInstance instance : List.of(a, b)) {
			instance.commands.once(TieredCommands.failoverMove(),
					() -> replica.command("ACL", "SETUSER", "default", "-eval", "-evalsha"));
		}

		cluster.killPrimary(counter);
		try {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> a.failoversHandled() > handledOnA && b.failoversHandled() > handledOnB);
			assertThat(ManagerInternals.pending(a.manager).isEmpty()).isFalse();
			assertThat(onA.isInL1(key)).isTrue();
			assertThat(onB.isInL1(key)).isTrue();

			replica.command("ACL", "SETUSER", "default", "+@all");
			await().atMost(Duration.ofSeconds(10))
				.until(() -> ManagerInternals.pending(a.manager).isEmpty() && ManagerInternals.pending(b.manager).isEmpty());

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
	void aReadAfterTheConnectionRoutesToAPromotedReplicaButBeforeTheGenerationsMoveGoesToTheLoader() throws Exception {
		CacheInstance.Settings properties = CacheInstance.properties();
		// Lettuce delivers its events on a thread of their own, after it routes by the new topology: parked here.
		ExecutorService events = Executors.newSingleThreadExecutor();
		CacheInstance a = CacheInstance.start(cluster, properties, DefaultClientResources.builder()
			.eventBus(new DefaultEventBus(Schedulers.fromExecutorService(events)))
			.build());
		this.scope.closeAfter(a);
		this.scope.closeAfter(events::shutdownNow);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		long chosen = keyOffStreamAndCounter(properties, onA, "items");
		RedisCluster.Node primary = cluster.primaryFor(onA.redisKey(chosen));
		RedisCluster.Node replica = cluster.replicaOf(primary);
		onA.get(chosen, new CountingLoader().returning(OLD));
		String oldKey = onA.redisKey(chosen);
		cutOff(primary, replica);
		onA.evict(chosen);
		CountDownLatch moved = new CountDownLatch(1);
		a.commands.once(TieredCommands.failoverMove(), () -> Latches.park(moved));

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
		this.scope.closeAfter(a);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		long chosen = keyOffStreamAndCounter(properties, onA, "items");
		RedisCluster.Node primary = cluster.primaryFor(onA.redisKey(chosen));
		RedisCluster.Node replica = cluster.replicaOf(primary);
		onA.get(chosen, new CountingLoader().returning(OLD));
		cutOff(primary, replica);
		onA.evict(chosen);
		long handled = a.failoversHandled();

		// The replica takes the slots without the primary's last writes; the primary, alive, answers MOVED.
		replica.command("CLUSTER", "FAILOVER", "TAKEOVER");
		await().atMost(Duration.ofSeconds(10)).until(() -> replica.isPrimary() && !primary.isPrimary());
		assertThat(replica.command("GET", onA.redisKey(chosen))).contains("old");

		CountingLoader loader = new CountingLoader();
		assertThat(onA.get(chosen, loader.returning(NEW))).contains(NEW);
		assertThat(loader.calls()).isEqualTo(1);
		await().atMost(Duration.ofSeconds(5)).until(() -> a.failoversHandled() > handled);
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
		long handled = a.failoversHandled();

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
		// A slot served by another primary is handled as a failover (ADR 0039): every generation moves.
		await().atMost(Duration.ofSeconds(5)).until(() -> a.failoversHandled() > handled);
	}

}
