package dev.concertcache.tiered.autoconfigure;

import dev.concertcache.tiered.support.TieredCacheManagerBuilder;

/**
 * Callback that customizes the {@link TieredCacheManagerBuilder} before the auto-configured manager is
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
	void customize(TieredCacheManagerBuilder builder);

}
