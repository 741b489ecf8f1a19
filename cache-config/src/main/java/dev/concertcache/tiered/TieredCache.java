package dev.concertcache.tiered;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * A named cache of typed keys and values in front of a loader (the database).
 *
 * @param <K> the key type: a {@link String}, a boxed primitive, or a record of those
 * @param <V> the value type, stored in Redis as versioned JSON
 */
public interface TieredCache<K, V> {

	/** The cache name, as used in configuration and metric tags. */
	String name();

	/**
	 * Returns the value for {@code key}, calling {@code loader} at most once per instance for concurrent
	 * misses. An empty result (no such row) is cached too, for a shorter time.
	 */
	Optional<V> get(K key, Supplier<Optional<V>> loader);

	/**
	 * Removes {@code key} from every tier of every instance; inside a transaction, once it has committed.
	 */
	void evict(K key);

	/**
	 * Makes every entry of this cache unreachable on every instance without scanning keys; inside a
	 * transaction, once it has committed.
	 */
	void evictAll();

}
