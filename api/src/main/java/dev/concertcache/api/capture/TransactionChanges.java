package dev.concertcache.api.capture;

import java.util.LinkedHashSet;
import java.util.Set;

import dev.concertcache.api.concert.ConcertCaches;
import dev.concertcache.api.schedule.ScheduleCaches;
import dev.concertcache.tiered.InvalidationFailedException;

/**
 * The cache keys one committed transaction made stale, deduplicated, and the invalidations that a write through
 * this service would make for them.
 */
final class TransactionChanges {

	private final Set<Long> concerts = new LinkedHashSet<>();

	private final Set<Long> scheduleConcerts = new LinkedHashSet<>();

	private boolean everything;

	void concert(Long id) {
		if (id != null) {
			this.concerts.add(id);
		}
	}

	void schedule(Long concertId) {
		if (concertId != null) {
			this.scheduleConcerts.add(concertId);
		}
	}

	/** A statement changed a captured table without row images (TRUNCATE, ALTER): every entry may be stale. */
	void everything() {
		this.everything = true;
	}

	boolean isEmpty() {
		return !this.everything && this.concerts.isEmpty() && this.scheduleConcerts.isEmpty();
	}

	/**
	 * A concert row (inserted, updated or deleted): what {@link ConcertCaches} says a concert change makes stale. A
	 * schedule row: the schedules of its concert, before and after. Above {@code maxKeys} keys of one cache, that
	 * whole cache.
	 * @throws InvalidationFailedException if Redis did not take one; the caller replays the transaction
	 */
	void invalidate(ConcertCaches concertCaches, ScheduleCaches scheduleCaches, int maxKeys) {
		if (this.everything || this.concerts.size() > maxKeys) {
			concertCaches.invalidateAll();
			return;
		}
		concertCaches.invalidateChanged(this.concerts);
		Set<Long> schedulesOnly = new LinkedHashSet<>(this.scheduleConcerts);
		schedulesOnly.removeAll(this.concerts);
		if (this.concerts.size() + schedulesOnly.size() > maxKeys) {
			scheduleCaches.invalidateAll();
			return;
		}
		for (Long id : schedulesOnly) {
			scheduleCaches.invalidate(id);
		}
	}

}
