package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.function.Supplier;

import dev.concertcache.tiered.NotInMemoryException;
import dev.concertcache.tiered.TieredCache;

/**
 * Reads what this instance's memory holds and waits for nothing: a read that would need Redis, the loader or another
 * reader's load throws {@link NotInMemoryException}. The route of a thread inside
 * {@link dev.concertcache.tiered.TieredCacheManager#inMemoryOnly()}.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class InMemoryTieredCache<K, V> extends ReadRoute<K, V> {

	private final DefaultTieredCache<K, V> core;

	InMemoryTieredCache(DefaultTieredCache<K, V> core, TieredCache<K, V> target) {
		super(target);
		this.core = core;
	}

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		Lookup<V> lookup = this.core.lookupInMemory(key, loader);
		if (lookup == null) {
			throw NotInMemoryException.INSTANCE;
		}
		return lookup;
	}

}
