package dev.concertcache.tiered.autoconfigure;

import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.boot.cache.metrics.CacheMeterBinderProvider;

import dev.concertcache.tiered.spring.TieredSpringCache;
import dev.concertcache.tiered.spring.TieredSpringCacheMeterBinder;

/**
 * Lets Boot's {@code CacheMetricsRegistrar} bind {@link TieredSpringCacheMeterBinder}s, with the
 * {@code cache.manager} tag it adds.
 */
final class TieredSpringCacheMeterBinderProvider implements CacheMeterBinderProvider<TieredSpringCache<?, ?>> {

	@Override
	public MeterBinder getMeterBinder(TieredSpringCache<?, ?> cache, Iterable<Tag> tags) {
		return new TieredSpringCacheMeterBinder(cache, tags);
	}

}
