package dev.concertcache.tiered.spring;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;
import org.springframework.util.Assert;

import dev.concertcache.tiered.TieredCacheManager;

/**
 * The caches of a {@link TieredCacheManager} as a Spring {@link CacheManager}. Each cache is declared with its key
 * and value types ({@link Builder#cache}), since the tiers store typed keys and versioned JSON of one type; a name
 * that was not declared has no cache ({@code null}, as Spring's contract for a static manager allows), so that a
 * misspelt annotation fails instead of creating a cache no one configured. A cache here and the one the
 * application takes from the {@link TieredCacheManager} with the same name and types are the same cache.
 *
 * @author concert-cache
 */
public final class TieredSpringCacheManager implements CacheManager {

	private final TieredCacheManager tiers;

	private final Map<String, Types<?, ?>> declared;

	private final @Nullable MeterRegistry meterRegistry;

	private final ConcurrentMap<String, TieredSpringCache<?, ?>> caches = new ConcurrentHashMap<>();

	private TieredSpringCacheManager(Builder builder) {
		this.tiers = builder.tiers;
		this.declared = Map.copyOf(builder.declared);
		this.meterRegistry = builder.meterRegistry;
	}

	/** Starts building a manager over the caches of {@code tiers}. */
	public static Builder builder(TieredCacheManager tiers) {
		return new Builder(tiers);
	}

	@Override
	public @Nullable Cache getCache(String name) {
		Types<?, ?> types = this.declared.get(name);
		return (types != null) ? this.caches.computeIfAbsent(name, (key) -> create(key, types)) : null;
	}

	@Override
	public Collection<String> getCacheNames() {
		return this.declared.keySet();
	}

	private <K, V> TieredSpringCache<K, V> create(String name, Types<K, V> types) {
		return new TieredSpringCache<>(this.tiers.getCache(name, types.keyType(), types.valueType()), types.keyType(),
				types.valueType(), new TieredCacheCounts(this.meterRegistry, name));
	}

	private record Types<K, V>(Class<K> keyType, Class<V> valueType) {
	}

	/** Declares the caches of a {@link TieredSpringCacheManager}. */
	public static final class Builder {

		private final TieredCacheManager tiers;

		private final Map<String, Types<?, ?>> declared = new LinkedHashMap<>();

		private @Nullable MeterRegistry meterRegistry;

		private Builder(TieredCacheManager tiers) {
			Assert.notNull(tiers, "'tiers' must not be null");
			this.tiers = tiers;
		}

		/**
		 * Declares the cache {@code name}, configured under {@code tiered-cache.caches.<name>}.
		 * @throws IllegalArgumentException if it is declared already with other types
		 */
		public Builder cache(String name, Class<?> keyType, Class<?> valueType) {
			Types<?, ?> types = new Types<>(keyType, valueType);
			Types<?, ?> previous = this.declared.putIfAbsent(name, types);
			Assert.isTrue(previous == null || previous.equals(types), () -> "Cache '" + name + "' is declared with "
					+ previous + " and with " + types);
			return this;
		}

		/**
		 * The registry the tiers record their meters in, which Micrometer's {@code cache.*} meters of these caches
		 * are computed from; without one they read zero.
		 */
		public Builder meterRegistry(@Nullable MeterRegistry meterRegistry) {
			this.meterRegistry = meterRegistry;
			return this;
		}

		public TieredSpringCacheManager build() {
			return new TieredSpringCacheManager(this);
		}

	}

}
