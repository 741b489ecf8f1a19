package dev.concertcache.tiered;

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
	 * Tells every instance that an external change feed (a reader of the database's binary log) has invalidated
	 * every change committed more than {@code lag} ago; instances built to follow a feed trust neither tier while
	 * this was last said too long ago (ADR 0037). Does nothing where no feed is followed.
	 * @param lag how long before now the changes the feed has invalidated were committed, at most
	 * @throws RuntimeException if Redis did not take it; the next confirmation repeats it
	 */
	default void changeFeedCaughtUp(java.time.Duration lag) {
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

}
