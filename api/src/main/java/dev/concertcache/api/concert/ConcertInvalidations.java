package dev.concertcache.api.concert;

import java.util.Collection;

import org.springframework.stereotype.Component;

import dev.concertcache.api.schedule.ScheduleCaches;
import dev.concertcache.tiered.InvalidationFailedException;

/**
 * Invalidates what a write of some concerts makes stale, for writers that do not go through this service (another
 * application, a batch job): each concert, its schedules and every list page, on every instance.
 */
@Component
public class ConcertInvalidations {

	private final ConcertCaches concerts;

	private final ScheduleCaches schedules;

	ConcertInvalidations(ConcertCaches concerts, ScheduleCaches schedules) {
		this.concerts = concerts;
		this.schedules = schedules;
	}

	/**
	 * Invalidates the concerts, their schedules and the list pages now, or throws: the caller holds the request
	 * and can repeat it, so nothing is queued in memory (unlike a write's eviction). Repeating is harmless.
	 * @throws InvalidationFailedException if Redis did not take one of the invalidations
	 */
	public void invalidate(Collection<Long> concertIds) {
		for (long id : concertIds) {
			this.concerts.invalidate(id);
			this.schedules.invalidate(id);
		}
		this.concerts.invalidatePages();
	}

}
