package dev.concertcache.tiered.support;

import dev.concertcache.tiered.TieredCache;

/**
 * A route a thread's reads take instead of the cache's tiers ({@link ThreadRoutedTieredCache}): the lookup is the
 * route's own; evictions and invalidations go to the cache itself, whatever route the thread is on.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
abstract class ReadRoute<K, V> implements TieredCache<K, V> {

	private final TieredCache<K, V> target;

	ReadRoute(TieredCache<K, V> target) {
		this.target = target;
	}

	@Override
	public String name() {
		return this.target.name();
	}

	@Override
	public void evict(K key) {
		this.target.evict(key);
	}

	@Override
	public void evictAll() {
		this.target.evictAll();
	}

	@Override
	public void invalidate(K key) {
		this.target.invalidate(key);
	}

	@Override
	public void invalidateAll() {
		this.target.invalidateAll();
	}

}
