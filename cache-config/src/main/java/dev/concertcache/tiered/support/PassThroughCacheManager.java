package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.Supplier;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheMode;

/**
 * The {@link TieredCacheManager} of {@link TieredCacheMode#NONE}: every read calls the loader,
 * so the application measures its baseline through the same code path it caches with.
 */
public final class PassThroughCacheManager implements TieredCacheManager {

	@Override
	public <K, V> TieredCache<K, V> getCache(String name, Class<K> keyType, Class<V> valueType) {
		return new TieredCache<>() {

			@Override
			public String name() {
				return name;
			}

			@Override
			public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
				Optional<V> value = loader.get();
				return Lookup.fresh((value != null) ? value : Optional.empty(), Source.LOADER);
			}

			@Override
			public void evict(K key) {
			}

			@Override
			public void evictAll() {
			}

			@Override
			public void invalidate(K key) {
			}

			@Override
			public void invalidateAll() {
			}

		};
	}

	/** Every read calls the loader: whatever was committed, a read here has caught up with it. */
	@Override
	public boolean awaitChangeFeed(Predicate<String> covers, Duration timeout) {
		return true;
	}

}
