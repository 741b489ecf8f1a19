package dev.concertcache.tiered;

import java.util.Optional;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Sends every call of a thread inside an open {@link TieredCacheWarmup} to the cache's throwaway twin, and every
 * other call to the cache itself, so that a warm-up leaves the real caches cold (ADR 0202).
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class WarmupRoutingTieredCache<K, V> implements TieredCache<K, V> {

	private final TieredCache<K, V> target;

	private final Supplier<@Nullable TieredCache<K, V>> twin;

	/**
	 * @param twin the twin of the warm-up the calling thread is in, {@code null} outside one
	 */
	WarmupRoutingTieredCache(TieredCache<K, V> target, Supplier<@Nullable TieredCache<K, V>> twin) {
		this.target = target;
		this.twin = twin;
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
		TieredCache<K, V> twin = this.twin.get();
		return (twin != null) ? twin : this.target;
	}

}
