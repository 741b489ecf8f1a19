package dev.concertcache.api.capture;

import java.util.LinkedHashSet;
import java.util.Set;

import dev.concertcache.api.concert.ConcertCaches;
import dev.concertcache.api.concert.Invalidations;
import dev.concertcache.api.schedule.ScheduleCaches;
import dev.concertcache.tiered.InvalidationFailedException;

/**
 * The cache keys committed transactions made stale (one, or several merged while Redis refused their
 * invalidations), deduplicated, and the invalidations that a write through this service would make for them.
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

	/**
	 * Adds what {@code other} made stale; past {@code maxKeys} keys of one kind, everything (invalidations are
	 * idempotent, and a merge grows only while Redis refuses them: it must stay bounded).
	 */
	void merge(TransactionChanges other, int maxKeys) {
		this.everything |= other.everything;
		this.concerts.addAll(other.concerts);
		this.scheduleConcerts.addAll(other.scheduleConcerts);
		if (this.concerts.size() > maxKeys || this.scheduleConcerts.size() > maxKeys) {
			everything();
		}
		if (this.everything) {
			this.concerts.clear();
			this.scheduleConcerts.clear();
		}
	}

	boolean isEmpty() {
		return !this.everything && this.concerts.isEmpty() && this.scheduleConcerts.isEmpty();
	}

	/**
	 * A concert row (inserted, updated or deleted): what {@link ConcertCaches} says a concert change makes stale. A
	 * schedule row: the schedules of its concert, before and after. Above {@code maxKeys} keys of one cache, that
	 * whole cache. Every invalidation is tried, even after one failed.
	 * @throws InvalidationFailedException the first failure, if Redis did not take one; the caller tries again
	 */
	void invalidate(ConcertCaches concertCaches, ScheduleCaches scheduleCaches, int maxKeys) {
		if (this.everything || this.concerts.size() > maxKeys) {
			concertCaches.invalidateAll();
			return;
		}
		Invalidations all = new Invalidations();
		all.run(() -> concertCaches.invalidateChanged(this.concerts));
		Set<Long> schedulesOnly = new LinkedHashSet<>(this.scheduleConcerts);
		schedulesOnly.removeAll(this.concerts);
		if (this.concerts.size() + schedulesOnly.size() > maxKeys) {
			all.run(scheduleCaches::invalidateAll);
		}
		else {
			for (Long id : schedulesOnly) {
				all.run(() -> scheduleCaches.invalidate(id));
			}
		}
		all.rethrowFirstFailure();
	}

}
