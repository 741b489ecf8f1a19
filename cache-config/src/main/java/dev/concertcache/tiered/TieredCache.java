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
	 * misses. An empty result (no such row) is cached too, for a shorter time. If the loader fails and the cache
	 * still holds an expired value within its {@code stale-if-error} window, that value is returned; use
	 * {@link #lookup} to know.
	 * @throws LoadRejectedException if the loader was needed but its circuit breaker or bulkhead did not let the
	 * call through, and there was nothing to serve stale
	 */
	default Optional<V> get(K key, Supplier<Optional<V>> loader) {
		return lookup(key, loader).value();
	}

	/**
	 * Like {@link #get}, and tells whether the value is stale: served after its time to live because the loader
	 * failed.
	 */
	Lookup<V> lookup(K key, Supplier<Optional<V>> loader);

	/**
	 * Removes {@code key} from every tier of every instance; inside a transaction, once it has committed.
	 */
	void evict(K key);

	/**
	 * Makes every entry of this cache unreachable on every instance without scanning keys; inside a
	 * transaction, once it has committed.
	 */
	void evictAll();

	/**
	 * Removes {@code key} from every tier of every instance now, whatever transaction is active, or throws. For
	 * callers that replay invalidations from a durable record (the database's binary log, an invalidation request)
	 * and must not move past one that did not reach Redis: the caller's replay is the retry that counts. One that
	 * did not reach Redis is pending here as {@link #evict}'s would be, so that this instance reads the key from
	 * the loader, not Redis' old value, until it lands.
	 * @throws InvalidationFailedException if Redis did not take the invalidation (this instance's L1 is cleared
	 * all the same)
	 */
	void invalidate(K key);

	/**
	 * Like {@link #invalidate} for every entry of this cache (one generation move).
	 * @throws InvalidationFailedException if Redis did not take the invalidation
	 */
	void invalidateAll();

	/**
	 * The result of a {@link TieredCache#lookup}.
	 *
	 * @param value the value, empty if the loader found none
	 * @param stale whether the value outlived its time to live and is served only because the loader failed
	 * @param source where the value came from
	 * @param <V> the value type
	 */
	record Lookup<V>(Optional<V> value, boolean stale, Source source) {

		public static <V> Lookup<V> fresh(Optional<V> value, Source source) {
			return new Lookup<>(value, false, source);
		}

		public static <V> Lookup<V> stale(Optional<V> value, Source source) {
			return new Lookup<>(value, true, source);
		}

	}

	/** Where a {@link Lookup}'s value came from. */
	enum Source {

		/** This instance's memory (Caffeine), or a load of this instance already in flight for the same key. */
		L1,

		/** Redis. */
		L2,

		/** The loader (the database): neither tier had a fresh value. */
		LOADER

	}

}
