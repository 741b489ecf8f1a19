package dev.concertcache.api.schedule;

import org.springframework.stereotype.Component;

import dev.concertcache.tiered.spring.TieredSpringCacheManager;
import dev.concertcache.tiered.spring.TieredSpringCacheManagerCustomizer;

/**
 * The schedules cache as a Spring cache, with the types the tiers store it under, for the annotations and
 * {@code /actuator/caches}.
 */
@Component
class ScheduleCacheDeclarations implements TieredSpringCacheManagerCustomizer {

	@Override
	public void customize(TieredSpringCacheManager.Builder builder) {
		builder.cache(ScheduleCaches.SCHEDULES, Long.class, ConcertSchedules.class);
	}

}
