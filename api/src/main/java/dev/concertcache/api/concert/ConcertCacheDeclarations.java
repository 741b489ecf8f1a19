package dev.concertcache.api.concert;

import org.springframework.stereotype.Component;

import dev.concertcache.tiered.spring.TieredSpringCacheManager;
import dev.concertcache.tiered.spring.TieredSpringCacheManagerCustomizer;

/**
 * The concert caches as Spring caches, with the types the tiers store them under, for the annotations and
 * {@code /actuator/caches}.
 */
@Component
class ConcertCacheDeclarations implements TieredSpringCacheManagerCustomizer {

	@Override
	public void customize(TieredSpringCacheManager.Builder builder) {
		builder.cache(ConcertCaches.CONCERT, Long.class, Concert.class)
			.cache(ConcertCaches.LIST, Long.class, ListBlock.class)
			.cache(ConcertCaches.LIST_END, String.class, ListEnd.class);
	}

}
