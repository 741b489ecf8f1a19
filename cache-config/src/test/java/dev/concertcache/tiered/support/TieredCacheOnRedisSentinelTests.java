package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.CommandTrap;
import dev.concertcache.testsupport.RedisSentinel;
import dev.concertcache.testsupport.Replication;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.gate.PendingEvictions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The cache on a primary a real Redis Sentinel watches (a replica, one Sentinel with quorum 1): a primary killed
 * with an invalidation its replica never received, and invalidations across instances after the promotion
 * (ADR 0039, "Redis Sentinel"). One setup per test: each kills its primary.
 */
class TieredCacheOnRedisSentinelTests {

	private static final Item OLD = new Item(1, "old");

	private static final Item NEW = new Item(1, "new");

	@RegisterExtension
	final TestScope scope = new TestScope();

	private final List<CacheInstance> instances = new ArrayList<>();

	private RedisSentinel sentinel;

	@BeforeEach
	void startSentinel() {
		this.sentinel = this.scope.closeAfter(new RedisSentinel().start());
	}

	@Test
	void aTombstoneLostWithAKilledPrimaryDoesNotBringTheOldValueBackAndTheGenerationMovesOnceForTheFleet() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		RedisSentinel.Node replica = this.sentinel.replica();
		onA.get(1L, new CountingLoader().returning(OLD));
		cutOffReplicaThenEvict(onA, onB);
		String oldKey = onA.redisKey(1L);
		long handledOnA = a.failoversHandled();
		long handledOnB = b.failoversHandled();
		long killedAt = System.nanoTime();
		this.sentinel.killPrimary();
		long promotedAfter = (System.nanoTime() - killedAt) / 1_000_000;
		// The promoted replica holds the old value without its tombstone, as asynchronous replication allows.
		assertThat(replica.command("GET", oldKey)).contains("old");

		await().atMost(Duration.ofSeconds(30))
			.until(() -> a.failoversHandled() > handledOnA && b.failoversHandled() > handledOnB);
		long handledAfter = (System.nanoTime() - killedAt) / 1_000_000;
		System.out.println("Sentinel failover: replica promoted " + promotedAfter + " ms after the kill, "
				+ "generations moved on both instances " + handledAfter + " ms after it");
		await().atMost(Duration.ofSeconds(10)).until(() -> reachesRedis(a) && reachesRedis(b));
		// Past the L1 time to live: the reads go to Redis, which holds the old value under the old generation.
		a.ticker.advance(Duration.ofMinutes(1));
		b.ticker.advance(Duration.ofMinutes(1));
		for (CacheUnderTest<Long, Item> cache : List.of(onA, onB)) {
			assertThat(cache.get(1L, new CountingLoader().returning(NEW))).contains(NEW);
		}
		assertThat(onA.redisKey(1L)).isNotEqualTo(oldKey).isEqualTo(onB.redisKey(1L));
		assertThat(evictAllsAnnounced(replica, properties.getKeyPrefix() + ":invalidations", "items")).as("evict-alls announced on the new primary").isEqualTo(1);
	}

	@Test
	void afterAFailoverInvalidationsReachTheOtherInstanceAgain() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		onB.get(1L, new CountingLoader().returning(OLD));
		long handledOnB = b.failoversHandled();

		this.sentinel.killPrimary();
		await().atMost(Duration.ofSeconds(30))
			.until(() -> b.failoversHandled() > handledOnB && a.manager.isListening()
					&& b.manager.isListening());
		onB.get(1L, new CountingLoader().returning(OLD));
		assertThat(onB.isInL1(1L)).isTrue();

		a.cache("items", Long.class, Item.class).evict(1L);
		await().atMost(Duration.ofSeconds(5)).until(() -> !onB.isInL1(1L));
		assertThat(onB.get(1L, new CountingLoader().returning(NEW))).contains(NEW);
	}

	@Test
	void withAChangeFeedFollowedEveryInstanceKeepsItsL1ThroughAFailover() {
		CacheInstance.Settings properties = CacheInstance.properties()
			.and((builder) -> builder.changeFeedMaxLag(Duration.ofMillis(200)));
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		await().atMost(Duration.ofSeconds(10)).until(this::everyServerConfirmed);
		confirmChangeFeed(a, b);
		onA.get(1L, new CountingLoader().returning(OLD));
		onB.get(1L, new CountingLoader().returning(OLD));
		String oldKey = onA.redisKey(1L);
		RedisSentinel.Node primary = this.sentinel.primary();
		RedisSentinel.Node replica = this.sentinel.replica();
		await().atMost(Duration.ofSeconds(10)).until(() -> replicated(primary, replica));
		long handledOnA = a.failoversHandled();
		long handledOnB = b.failoversHandled();

		this.sentinel.killPrimary();
		await().atMost(Duration.ofSeconds(30))
			.until(() -> a.failoversHandled() > handledOnA && b.failoversHandled() > handledOnB);
		// Heard after the generation move's announcement: a confirmation appended once both instances moved.
		confirmChangeFeed(a, b);

		assertThat(onA.redisKey(1L)).isNotEqualTo(oldKey).isEqualTo(onB.redisKey(1L));
		assertThat(onA.isInL1(1L)).as("L1 of A").isTrue();
		assertThat(onB.isInL1(1L)).as("L1 of B").isTrue();
		assertThat(onB.lookup(1L, new CountingLoader().returning(NEW)).source()).isEqualTo(Source.L1);
	}

	@Test
	void aReadAfterTheDataConnectionCameBackOnThePromotedReplicaButBeforeTheRunIdCheckGoesToTheLoader()
			throws Exception {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		onA.get(1L, new CountingLoader().returning(OLD));
		cutOffReplicaThenEvict(onA, onB);
		CountDownLatch checked = new CountDownLatch(1);
		CommandTrap.Rule serverCheck = b.commands.always(TieredCommands.listenersServerCheck(), () -> Latches.park(checked));

		this.sentinel.killPrimary();
		try {
			// B's data connection is back, on the promoted replica (old value, no tombstone); its listener is parked.
			await().atMost(Duration.ofSeconds(10)).until(() -> reachesRedis(b) && serverCheck.fired().get() > 0);
			b.ticker.advance(Duration.ofMinutes(1));

			CountingLoader loader = new CountingLoader();
			assertThat(onB.get(1L, loader.returning(NEW))).contains(NEW);
			assertThat(loader.calls()).isEqualTo(1);
		}
		finally {
			checked.countDown();
		}
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		CacheInstance instance = this.scope.closeAfter(CacheInstance.start(this.sentinel, properties));
		this.instances.add(instance);
		return instance;
	}

	/**
	 * Both instances hold key 1 (B from Redis), the replica stops receiving (it cannot authenticate when it
	 * reconnects), then A evicts the key: its tombstone is on the primary only, and both read the new value.
	 */
	private void cutOffReplicaThenEvict(CacheUnderTest<Long, Item> onA, CacheUnderTest<Long, Item> onB) {
		RedisSentinel.Node primary = this.sentinel.primary();
		RedisSentinel.Node replica = this.sentinel.replica();
		// Connections dropped while the instances started (their reconnects) are confirmed by then.
		await().atMost(Duration.ofSeconds(10)).until(this::everyServerConfirmed);
		assertThat(onB.lookup(1L, new CountingLoader().returning(OLD)).source()).isEqualTo(Source.L2);
		await().atMost(Duration.ofSeconds(10)).until(() -> replicated(primary, replica));
		replica.command("CONFIG", "SET", "masterauth", "cut-off");
		primary.command("CLIENT", "KILL", "TYPE", "replica");
		await().atMost(Duration.ofSeconds(10))
			.until(() -> replica.command("INFO", "replication").contains("master_link_status:down"));
		onA.evict(1L);
		await().atMost(Duration.ofSeconds(5)).until(() -> !onB.isInL1(1L));
		assertThat(onA.get(1L, new CountingLoader().returning(NEW))).contains(NEW);
		assertThat(onB.get(1L, new CountingLoader().returning(NEW))).contains(NEW);
	}

	/** The feed says it caught up, until both instances heard it from the stream (their ticker stands still). */
	private static void confirmChangeFeed(CacheInstance... instances) {
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			instances[0].manager.changeFeedCaughtUp(Duration.ZERO, null);
			return Arrays.stream(instances).allMatch((instance) -> {
				Duration silence = instance.manager.getChangeFeedSilence();
				return silence != null && silence.isZero();
			});
		});
	}

	private boolean everyServerConfirmed() {
		return this.instances.stream()
			.allMatch((instance) -> ManagerInternals.serverConfirmation(instance.manager).isConfirmed());
	}

	/** Whether the instance's data connection is back (on the promoted replica). */
	private static boolean reachesRedis(CacheInstance instance) {
		try {
			instance.redis.hasKey("any");
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/** How many evict-alls of {@code cache} the invalidation stream on {@code node} holds. */
	private static long evictAllsAnnounced(RedisSentinel.Node node, String stream, String cache) {
		List<String> fields = node.command("XRANGE", stream, "-", "+").lines().map(String::trim).toList();
		long count = 0;
		for (int i = 0; i + 3 < fields.size(); i++) {
			if (fields.get(i).equals("cache") && fields.get(i + 1).equals(cache) && fields.get(i + 2).equals("key")
					&& fields.get(i + 3).equals(PendingEvictions.ALL)) {
				count++;
			}
		}
		return count;
	}

	private static boolean replicated(RedisSentinel.Node primary, RedisSentinel.Node replica) {
		return Replication.caughtUp(primary.command("INFO", "replication"), replica.command("INFO", "replication"));
	}

}
