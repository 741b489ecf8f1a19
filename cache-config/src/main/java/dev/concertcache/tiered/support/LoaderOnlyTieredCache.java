package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.function.Supplier;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.loader.LoaderGuard;

/**
 * Reads straight from the loader, through the cache's loader guard, neither tier consulted nor filled: the route of
 * a causal read whose position this instance has not heard in time (ADR 0038).
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class LoaderOnlyTieredCache<K, V> extends ReadRoute<K, V> {

	private final LoaderGuard guard;

	LoaderOnlyTieredCache(TieredCache<K, V> target, LoaderGuard guard) {
		super(target);
		this.guard = guard;
	}

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		return Lookup.fresh(this.guard.call(loader), Source.LOADER);
	}

}
