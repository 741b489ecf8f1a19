package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisCluster;
import dev.concertcache.testsupport.Replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One real Redis Cluster (3 primaries, 3 replicas) per test class, started once (that takes seconds), and what the
 * cluster tests share: cache instances configured by its node list alone, closed after each test; a test change
 * feed; the primaries that hold a key, a generation counter or the invalidation stream (ADR 0039).
 */
abstract class RedisClusterTestSupport {

	static final Item OLD = new Item(1, "old");

	static final Item NEW = new Item(1, "new");

	static final Duration FEED_MAX_LAG = Duration.ofMillis(750);

	static RedisCluster cluster;

	@RegisterExtension
	final TestScope scope = new TestScope();

	@BeforeAll
	static void startCluster() {
		cluster = new RedisCluster().start();
	}

	@AfterAll
	static void stopCluster() {
		cluster.close();
	}

	CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(cluster, properties));
	}

	/** A cache whose generation counter is on {@code node}. */
	static String cacheWhoseCounterIsOn(CacheInstance.Settings properties, RedisCluster.Node node) {
		for (int i = 0;; i++) {
			String name = "pages" + i;
			if (counterOf(properties, name).address().equals(node.address())) {
				return name;
			}
		}
	}

	/** Whether {@code observer} holds {@code node} failed (FAIL, agreed by the primaries; not just PFAIL). */
	static boolean isFailed(RedisCluster.Node observer, RedisCluster.Node node) {
		return observer.command("CLUSTER", "NODES")
			.lines()
			.filter((line) -> line.contains(" " + node.address() + "@"))
			.anyMatch((line) -> List.of(line.split(" ")[2].split(",")).contains("fail"));
	}

	/**
	 * A cache whose generation counter and registered shapes (both read by every eviction) are on other primaries
	 * than {@code node}.
	 */
	static String cacheWhoseCounterIsNotOn(CacheInstance.Settings properties, RedisCluster.Node node) {
		for (int i = 0;; i++) {
			String name = "pages" + i;
			if (!counterOf(properties, name).address().equals(node.address()) && !cluster
				.primaryFor(properties.getKeyPrefix() + ":v1:" + name + ":shapes")
				.address()
				.equals(node.address())) {
				return name;
			}
		}
	}

	/** Instances a and b following a test change feed on a, which has landed once and been heard by both. */
	Followed twoInstancesFollowingAFeed() {
		CacheInstance.Settings properties = CacheInstance.properties((builder) -> builder.changeFeedMaxLag(FEED_MAX_LAG));
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		ChangeFeed feed = new ChangeFeed(a.manager);
		assertThat(feed.landed()).isTrue();
		awaitConfirmed(feed, a, b);
		return new Followed(properties, a, b, a.cache("items", Long.class, Item.class),
				b.cache("items", Long.class, Item.class), feed);
	}

	static final class Followed {

		final CacheInstance.Settings properties;

		final CacheInstance a;

		final CacheInstance b;

		final CacheUnderTest<Long, Item> onA;

		final CacheUnderTest<Long, Item> onB;

		final ChangeFeed feed;

		Followed(CacheInstance.Settings properties, CacheInstance a, CacheInstance b, CacheUnderTest<Long, Item> onA,
				CacheUnderTest<Long, Item> onB, ChangeFeed feed) {
			this.properties = properties;
			this.a = a;
			this.b = b;
			this.onA = onA;
			this.onB = onB;
			this.feed = feed;
		}


		String streamKey() {
			return this.properties.keyPrefix() + ":invalidations";
		}

		/**
		 * Kills the stream's primary and waits until both instances handled the failover, which took longer than
		 * max-lag; then starts b's listener again.
		 */
		void failOver(RedisCluster.Node stream) {
			long handledOnA = this.a.failoversHandled();
			long handledOnB = this.b.failoversHandled();
			cluster.killPrimary(stream);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> this.a.failoversHandled() > handledOnA
						&& this.b.failoversHandled() > handledOnB);
			this.a.watermark.advance(FEED_MAX_LAG.plusMillis(1));
			this.b.watermark.advance(FEED_MAX_LAG.plusMillis(1));
			ManagerInternals.listener(this.b.manager).start();
		}

	}

	/** Has the feed confirm until every instance heard a confirmation no older than max-lag. */
	static void awaitConfirmed(ChangeFeed feed, CacheInstance... instances) {
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			assertThat(feed.confirm()).isTrue();
			return List.of(instances).stream().allMatch((instance) -> {
				Duration silence = instance.manager.getChangeFeedSilence();
				return silence != null && silence.compareTo(FEED_MAX_LAG) <= 0;
			});
		});
	}

	/** A change feed as the binary log's reader is one (ADR 0039): numbered positions, a checkpoint moved to each. */
	static final class ChangeFeed {

		private final DefaultTieredCacheManager manager;

		String checkpoint;

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
	static RedisCluster.Node counterOf(CacheInstance.Settings properties, String cache) {
		return cluster.primaryFor(properties.getKeyPrefix() + ":v1:" + cache + ":generation");
	}

	/**
	 * A key of {@code cache} (named {@code name}) on a primary that holds neither the invalidation stream nor the
	 * cache's generation counter: killing that primary loses only the key's own writes.
	 */
	static long keyOffStreamAndCounter(CacheInstance.Settings properties, CacheUnderTest<Long, Item> cache,
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
	static long keyOff(CacheUnderTest<Long, Item> cache, RedisCluster.Node node) {
		long key = 1;
		while (cluster.primaryFor(cache.redisKey(key)).address().equals(node.address())) {
			key++;
		}
		return key;
	}

	/** The name in the value {@code redisKey} holds as the instance's connection reads it, {@code null} if none. */
	static String valueNameIn(CacheInstance instance, String redisKey) {
		try {
			String raw = instance.redis.opsForValue().get(redisKey);
			return (raw != null && raw.contains("\"old\"")) ? "old" : null;
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	/** Once {@code replica} has caught up, it stops receiving: it cannot authenticate when it reconnects. */
	static void cutOff(RedisCluster.Node primary, RedisCluster.Node replica) {
		await().atMost(Duration.ofSeconds(10)).until(() -> replicated(primary, replica));
		replica.command("CONFIG", "SET", "masterauth", "cut-off");
		primary.command("CLIENT", "KILL", "TYPE", "replica");
		await().atMost(Duration.ofSeconds(10))
			.until(() -> replica.command("INFO", "replication").contains("master_link_status:down"));
	}

	static boolean replicated(RedisCluster.Node primary, RedisCluster.Node replica) {
		return Replication.caughtUp(primary.command("INFO", "replication"), replica.command("INFO", "replication"));
	}

}
