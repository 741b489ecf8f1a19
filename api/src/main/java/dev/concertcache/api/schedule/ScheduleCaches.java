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

	private final TieredCache<Long, ConcertSchedules> schedules;

	ScheduleCaches(TieredCacheManager caches) {
		this.schedules = caches.getCache("schedules", Long.class, ConcertSchedules.class);
	}

	Lookup<ConcertSchedules> lookup(long concertId, Supplier<Optional<ConcertSchedules>> loader) {
		return this.schedules.lookup(concertId, loader);
	}

	/** Evicts the schedules of {@code concertId} once the current transaction commits. */
	public void evict(long concertId) {
		this.schedules.evict(concertId);
	}

	/**
	 * Invalidates the schedules of {@code concertId} on every instance now, or throws.
	 * @throws dev.concertcache.tiered.InvalidationFailedException if Redis did not take it
	 */
	public void invalidate(long concertId) {
		this.schedules.invalidate(concertId);
	}

}
