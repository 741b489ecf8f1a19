package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.function.Supplier;

import dev.concertcache.tiered.TieredCache;

/**
 * A cache as the application gets it (evictions after commit, warm-up routing), with the diagnostics of the
 * {@link DefaultTieredCache} under it.
 */
final class CacheUnderTest<K, V> implements TieredCache<K, V> {

	private final TieredCache<K, V> cache;

	private final DefaultTieredCache<K, V> core;

	CacheUnderTest(TieredCache<K, V> cache, DefaultTieredCache<K, V> core) {
		this.cache = cache;
		this.core = core;
	}

	@Override
	public String name() {
		return this.cache.name();
	}

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		return this.cache.lookup(key, loader);
	}

	@Override
	public void evict(K key) {
		this.cache.evict(key);
	}

	@Override
	public void evictAll() {
		this.cache.evictAll();
	}

	@Override
	public void invalidate(K key) {
		this.cache.invalidate(key);
	}

	@Override
	public void invalidateAll() {
		this.cache.invalidateAll();
	}

	boolean isInL1(K key) {
		return this.core.isInL1(key);
	}

	boolean isStaleInL1(K key) {
		return this.core.isStaleInL1(key);
	}

	String redisKey(K key) {
		return this.core.redisKey(key);
	}

	void flush() {
		this.core.evictions().flush();
	}

	void onInvalidation(String key, long generation) {
		this.core.evictions().onInvalidation(key, generation);
	}

}
