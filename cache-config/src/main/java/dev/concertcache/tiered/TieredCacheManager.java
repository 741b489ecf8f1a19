package dev.concertcache.tiered;

import java.time.Duration;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * Creates the {@link TieredCache caches} an application uses; each name is configured under
 * {@code tiered-cache.caches.<name>}.
 */
public interface TieredCacheManager {

	/**
	 * Returns the cache called {@code name}, created on first use.
	 * @param name the cache name
	 * @param keyType the key type
	 * @param valueType the value type
	 */
	<K, V> TieredCache<K, V> getCache(String name, Class<K> keyType, Class<V> valueType);

	/**
	 * The checkpoint of an external change feed (a reader of the database's binary log): the position, in the
	 * feed's own notation, through which its invalidations have landed, as the node of the invalidation stream holds
	 * it (ADR 0039). A feed reads from it: a node that lost the feed's last writes (a failover with asynchronous
	 * replication) holds an earlier one, so what it lost is invalidated again.
	 * @return the checkpoint, {@code null} if there is none (never set, or lost with everything the node held)
	 * @throws RuntimeException if Redis did not answer
	 */
	default @Nullable String changeFeedCheckpoint() {
		return null;
	}

	/**
	 * Moves the change feed's checkpoint to {@code checkpoint}, after the invalidations of every change up to it
	 * have landed, if it is still {@code previous}: written after them to the node of the invalidation stream, so
	 * that a node that kept it kept their announcements.
	 * @param previous the checkpoint the feed last read or moved, {@code null} for none
	 * @param checkpoint the position through which its invalidations have landed
	 * @return false if the checkpoint is not {@code previous}: the stream's node lost the feed's last writes, or
	 * another reader moved it; the feed must read again from {@link #changeFeedCheckpoint()}
	 * @throws RuntimeException if Redis did not answer; the feed tries again
	 */
	default boolean changeFeedLanded(@Nullable String previous, String checkpoint) {
		return true;
	}

	/**
	 * Tells every instance that the change feed has invalidated every change committed more than {@code lag} ago,
	 * if its checkpoint is still {@code checkpoint}; instances built to follow a feed trust neither tier while this
	 * was last said too long ago (ADR 0039). Does nothing where no feed is followed.
	 * @param lag how long before now the changes the feed has invalidated were committed, at most
	 * @param checkpoint the checkpoint the feed last read or moved, which covers every change it confirms;
	 * {@code null} for none
	 * @return false if the checkpoint is not {@code checkpoint} (see {@link #changeFeedLanded}): nothing was said
	 * @throws RuntimeException if Redis did not take it; the next confirmation repeats it
	 */
	default boolean changeFeedCaughtUp(Duration lag, @Nullable String checkpoint) {
		return true;
	}

	/**
	 * Waits until this instance has heard the change feed confirm a position that {@code covers} accepts, at most
	 * {@code timeout}: both of its tiers then hold every change up to that position (ADR 0038). A causal read waits
	 * here for the position of a write its client made, through any instance.
	 * @param covers whether a confirmed position, in the feed's own notation, covers the one waited for
	 * @return whether one did; {@code false} at once where no change feed is heard
	 * @throws InterruptedException if the waiting thread is interrupted
	 */
	default boolean awaitChangeFeed(Predicate<String> covers, Duration timeout) throws InterruptedException {
		return false;
	}

	/**
	 * Routes the calling thread's reads of this manager's caches to their loaders, neither tier consulted, until the
	 * returned scope is closed: for a causal read this instance did not catch up with in time (ADR 0038).
	 */
	default ReadThrough readThrough() {
		return () -> {
		};
	}

	/**
	 * Confines the calling thread's reads of this manager's caches to what this instance holds in memory until the
	 * returned scope is closed: a read that would wait for Redis, a loader or another reader's load throws
	 * {@link NotInMemoryException} instead, having waited for nothing and changed nothing. For a thread that must
	 * not block, such as an HTTP server's selector: it answers what memory holds and hands the rest to a thread that
	 * may wait.
	 * @return the scope, or {@code null} where these caches keep no values in memory (every read would wait)
	 */
	default @Nullable InMemoryOnly inMemoryOnly() {
		return null;
	}

	/**
	 * Opens a warm-up whose reads never touch this manager's caches (see {@link TieredCacheWarmup}).
	 * @throws IllegalStateException if one is open already
	 */
	default TieredCacheWarmup openWarmup() {
		return TieredCacheWarmup.NONE;
	}

	/**
	 * Fills this instance's L1 with the entries other instances read most (their published hot set), as far as
	 * Redis holds fresh values of them, within the configured bounds; before the instance reports ready. Never
	 * calls a loader and never fails: what it could not fill, the first reads load.
	 */
	default HotSetFill fillHotSet() {
		return HotSetFill.NONE;
	}

	/** A thread's stay among the reads that never wait; see {@link #inMemoryOnly()}. */
	interface InMemoryOnly extends AutoCloseable {

		@Override
		void close();

	}

	/** A thread's stay among the reads that go to the loaders; see {@link #readThrough()}. */
	interface ReadThrough extends AutoCloseable {

		@Override
		void close();

	}

}
