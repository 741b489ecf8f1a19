package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.function.Supplier;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.loader.LoaderGuard;

/**
 * Reads straight from the loader, through the cache's loader guard, neither tier consulted nor filled: the route of
 * a causal read whose position this instance has not heard in time (ADR 0038). Evictions and invalidations go to
 * the cache itself.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class LoaderOnlyTieredCache<K, V> implements TieredCache<K, V> {

	private final TieredCache<K, V> target;

	private final LoaderGuard guard;

	LoaderOnlyTieredCache(TieredCache<K, V> target, LoaderGuard guard) {
		this.target = target;
		this.guard = guard;
	}

	@Override
	public String name() {
		return this.target.name();
	}

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		return Lookup.fresh(this.guard.call(loader), Source.LOADER);
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
