package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.function.Supplier;

import dev.concertcache.tiered.NotInMemoryException;
import dev.concertcache.tiered.TieredCache;

/**
 * Reads what this instance's memory holds and waits for nothing: a read that would need Redis, the loader or another
 * reader's load throws {@link NotInMemoryException}. The route of a thread inside
 * {@link dev.concertcache.tiered.TieredCacheManager#inMemoryOnly()}. Evictions and invalidations go to the cache
 * itself.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class InMemoryTieredCache<K, V> implements TieredCache<K, V> {

	private final DefaultTieredCache<K, V> core;

	private final TieredCache<K, V> target;

	InMemoryTieredCache(DefaultTieredCache<K, V> core, TieredCache<K, V> target) {
		this.core = core;
		this.target = target;
	}

	@Override
	public String name() {
		return this.target.name();
	}

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		Lookup<V> lookup = this.core.lookupInMemory(key, loader);
		if (lookup == null) {
			throw NotInMemoryException.INSTANCE;
		}
		return lookup;
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
