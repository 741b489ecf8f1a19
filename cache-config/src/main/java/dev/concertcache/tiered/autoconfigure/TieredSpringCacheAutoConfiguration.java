package dev.concertcache.tiered.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.cache.metrics.CacheMeterBinderProvider;
import org.springframework.cache.CacheManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.spring.TieredSpringCacheManager;
import dev.concertcache.tiered.spring.TieredSpringCacheManagerCustomizer;

/**
 * {@link EnableAutoConfiguration Auto-configuration} of the application's Spring {@link CacheManager} over the
 * {@link TieredCacheManager}, whatever its mode (under {@code none} every read calls the loader, as the
 * annotations' methods then run every time), with the caches the {@link TieredSpringCacheManagerCustomizer}s
 * declare. Before Boot's cache auto-configuration, so that Boot does not make an in-memory one for
 * {@code @EnableCaching}; an application's own {@link CacheManager} wins. Registers the provider of Micrometer's
 * {@code cache.*} meters for Boot's cache metrics.
 *
 * @author concert-cache
 */
@AutoConfiguration(
		after = TieredCacheAutoConfiguration.class,
		beforeName = { "org.springframework.boot.cache.autoconfigure.CacheAutoConfiguration",
				"org.springframework.boot.cache.autoconfigure.metrics.CacheMetricsAutoConfiguration" })
@ConditionalOnClass(CacheManager.class)
@ConditionalOnBean(TieredCacheManager.class)
public final class TieredSpringCacheAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(CacheManager.class)
	TieredSpringCacheManager cacheManager(TieredCacheManager tiers, ObjectProvider<MeterRegistry> meterRegistry,
			ObjectProvider<TieredSpringCacheManagerCustomizer> customizers) {
		TieredSpringCacheManager.Builder builder = TieredSpringCacheManager.builder(tiers)
			.meterRegistry(meterRegistry.getIfUnique());
		customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
		return builder.build();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ CacheMeterBinderProvider.class, MeterRegistry.class })
	static class MetricsConfiguration {

		@Bean
		TieredSpringCacheMeterBinderProvider tieredSpringCacheMeterBinderProvider() {
			return new TieredSpringCacheMeterBinderProvider();
		}

	}

}
