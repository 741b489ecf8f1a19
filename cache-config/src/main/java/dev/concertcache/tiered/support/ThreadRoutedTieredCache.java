package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheWarmup;

/**
 * Sends every call of a thread to the cache its thread is routed to, else to the cache itself: inside an open
 * {@link TieredCacheWarmup}, the cache's throwaway twin, so that a warm-up leaves the real caches cold (ADR 0202);
 * inside a {@link TieredCacheManager.ReadThrough}, the loader, for a causal read this instance has not caught up
 * with (ADR 0038).
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class ThreadRoutedTieredCache<K, V> implements TieredCache<K, V> {

	private final TieredCache<K, V> target;

	private final Supplier<@Nullable TieredCache<K, V>> route;

	/**
	 * @param route the cache the calling thread is routed to, {@code null} for {@code target}
	 */
	ThreadRoutedTieredCache(TieredCache<K, V> target, Supplier<@Nullable TieredCache<K, V>> route) {
		this.target = target;
		this.route = route;
	}

	@Override
	public String name() {
		return this.target.name();
	}

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		return route().lookup(key, loader);
	}

	@Override
	public void evict(K key) {
		route().evict(key);
	}

	@Override
	public void evictAll() {
		route().evictAll();
	}

	@Override
	public void invalidate(K key) {
		route().invalidate(key);
	}

	@Override
	public void invalidateAll() {
		route().invalidateAll();
	}

	private TieredCache<K, V> route() {
		TieredCache<K, V> routed = this.route.get();
		return (routed != null) ? routed : this.target;
	}

}
