package dev.concertcache.api.schedule;

import java.util.Optional;
import java.util.function.Supplier;

import org.springframework.stereotype.Component;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * The cache of each concert's schedules, shared with the concert feature because deleting a concert
 * deletes its schedules.
 */
@Component
public class ScheduleCaches {

	/** The name of the cache of each concert's schedules, for this feature's {@code @CacheEvict}. */
	public static final String SCHEDULES = "schedules";

	private final TieredCache<Long, ConcertSchedules> schedules;

	ScheduleCaches(TieredCacheManager caches) {
		this.schedules = caches.getCache(SCHEDULES, Long.class, ConcertSchedules.class);
	}

	Lookup<ConcertSchedules> lookup(long concertId, Supplier<Optional<ConcertSchedules>> loader) {
		return this.schedules.lookup(concertId, loader);
	}

	/**
	 * Evicts the schedules of {@code concertId} once the current transaction commits, here at once and on the
	 * other instances through Redis.
	 */
	public void evict(long concertId) {
		this.schedules.evict(concertId);
	}

	/**
	 * Invalidates the schedules of {@code concertId} on every tier of every instance now.
	 * @throws dev.concertcache.tiered.InvalidationFailedException if Redis did not take it
	 */
	public void invalidate(long concertId) {
		this.schedules.invalidate(concertId);
	}

	/**
	 * Invalidates the schedules of every concert now.
	 * @throws dev.concertcache.tiered.InvalidationFailedException if Redis did not take it
	 */
	public void invalidateAll() {
		this.schedules.invalidateAll();
	}

}
