package dev.concertcache.tiered.spring;

/**
 * Declares caches of the auto-configured {@link TieredSpringCacheManager}, as Boot's
 * {@code RedisCacheManagerBuilderCustomizer} configures the Redis one: an application declares each cache its
 * annotations use, with the key and value types.
 */
@FunctionalInterface
public interface TieredSpringCacheManagerCustomizer {

	void customize(TieredSpringCacheManager.Builder builder);

}
