package dev.concertcache.tiered.autoconfigure;

import dev.concertcache.tiered.DefaultTieredCacheManager;

/**
 * Callback that customizes the {@link DefaultTieredCacheManager.Builder} before the auto-configured manager is
 * built, for example to set a {@link com.github.benmanes.caffeine.cache.Ticker} in tests. Customizers run in
 * {@link org.springframework.core.Ordered order}.
 *
 * @author concert-cache
 */
@FunctionalInterface
public interface TieredCacheManagerCustomizer {

	/**
	 * Customizes the builder.
	 * @param builder the builder of the manager
	 */
	void customize(DefaultTieredCacheManager.Builder builder);

}
