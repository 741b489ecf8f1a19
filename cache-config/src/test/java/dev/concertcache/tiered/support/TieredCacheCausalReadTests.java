package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.TieredCacheManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Causal reads (ADR 0038): the change feed's confirmations carry the position they cover, an instance waits until
 * it has heard one that covers a client's write, and a read it did not catch up with in time goes to the loader.
 * Real Redis; the feed is the test, positions are numbers.
 */
class TieredCacheCausalReadTests {

	private static final Item OLD = new Item(1, "old");

	private static final Item NEW = new Item(1, "new");

	@RegisterExtension
	final TestScope scope = new TestScope();

	/** One key prefix, so one invalidation stream, for the instances of a test. */
	private final CacheInstance.Settings properties = CacheInstance.properties();

	@Test
	void aReadWaitingForAPositionIsReleasedByTheConfirmationThatCoversIt() throws Exception {
		CacheInstance feed = instance();
		CacheInstance reader = instance();
		confirm(feed, null, "7");
		assertThat(reader.manager.awaitChangeFeed(atLeast(7), Duration.ofSeconds(10))).isTrue();
		CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> awaitQuietly(reader, atLeast(8)));

		confirm(feed, "7", "8");

		assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void aPositionNotYetConfirmedIsNotCovered() throws Exception {
		CacheInstance feed = instance();
		CacheInstance reader = instance();
		confirm(feed, null, "7");
		assertThat(reader.manager.awaitChangeFeed(atLeast(7), Duration.ofSeconds(10))).isTrue();

		assertThat(reader.manager.awaitChangeFeed(atLeast(8), Duration.ZERO)).isFalse();
	}

	@Test
	void anInstanceThatFollowsNoFeedForItsTiersStillHearsItsPositions() throws Exception {
		CacheInstance feed = instance();
		CacheInstance notFollowing = CacheInstance.start(RedisServer.shared(), this.properties);
		this.scope.closeAfter(notFollowing);

		confirm(feed, null, "3");

		assertThat(notFollowing.manager.awaitChangeFeed(atLeast(3), Duration.ofSeconds(10))).isTrue();
	}

	@Test
	void aConfirmationRefusedForAnotherCheckpointSaysNothingOfItsPosition() throws Exception {
		CacheInstance feed = instance();
		CacheInstance reader = instance();
		confirm(feed, null, "7");

		assertThat(feed.manager.changeFeedCaughtUp(Duration.ZERO, "9")).as("the node holds checkpoint 7").isFalse();
		confirm(feed, "7", "8");

		assertThat(reader.manager.awaitChangeFeed(atLeast(8), Duration.ofSeconds(10))).isTrue();
		assertThat(reader.manager.awaitChangeFeed(atLeast(9), Duration.ZERO)).isFalse();
	}

	@Test
	void aReadThroughGoesToTheLoaderPastWhatL1HoldsAndLeavesTheTiersAsTheyWere() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		CountingLoader database = new CountingLoader();

		Lookup<Item> through;
		try (TieredCacheManager.ReadThrough scope = instance.manager.readThrough()) {
			through = cache.lookup(1L, database.returning(NEW));
		}
		Lookup<Item> after = cache.lookup(1L, database.returning(NEW));

		assertThat(through.value()).contains(NEW);
		assertThat(through.source()).isEqualTo(Source.LOADER);
		assertThat(after.value()).as("the read-through filled no tier").contains(OLD);
		assertThat(after.source()).isEqualTo(Source.L1);
		assertThat(database.calls()).isEqualTo(1);
	}

	private static Predicate<String> atLeast(long position) {
		return (heard) -> Long.parseLong(heard) >= position;
	}

	private static boolean awaitQuietly(CacheInstance instance, Predicate<String> covers) {
		try {
			return instance.manager.awaitChangeFeed(covers, Duration.ofSeconds(10));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/** The feed moves its checkpoint from {@code previous} to {@code position}, then confirms it. */
	private static void confirm(CacheInstance feed, String previous, String position) {
		assertThat(feed.manager.changeFeedLanded(previous, position)).isTrue();
		assertThat(feed.manager.changeFeedCaughtUp(Duration.ZERO, position)).isTrue();
	}

	private CacheInstance instance() {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(),
				this.properties.and((builder) -> builder.changeFeedMaxLag(Duration.ofMillis(750)))));
	}

}
