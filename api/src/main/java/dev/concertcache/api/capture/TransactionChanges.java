package dev.concertcache.api.capture;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import dev.concertcache.api.concert.ConcertCaches;
import dev.concertcache.api.concert.ConcertCaches.Stale;
import dev.concertcache.api.schedule.ScheduleCaches;

/**
 * The rows committed transactions changed (one, or several committed while the lander was busy), deduplicated as
 * the cache keys they make stale.
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
	 * Adds what {@code other} made stale; past {@code maxKeys} keys of one kind, everything: a transaction (or a
	 * burst of them) that large costs one generation move per cache rather than thousands of tombstones.
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
	 * What these changes make stale ({@link ConcertCaches#staleAfter}); past {@code maxKeys} keys of one cache, that
	 * whole cache.
	 */
	List<Stale> stale(ConcertCaches caches, int maxKeys) {
		if (this.everything || this.concerts.size() > maxKeys) {
			return caches.everyCache();
		}
		List<Stale> stale = new ArrayList<>(caches.staleAfter(this.concerts));
		Set<Long> schedulesOnly = new LinkedHashSet<>(this.scheduleConcerts);
		schedulesOnly.removeAll(this.concerts);
		if (this.concerts.size() + schedulesOnly.size() > maxKeys) {
			stale.removeIf((each) -> each.cache().equals(ScheduleCaches.SCHEDULES));
			stale.add(new Stale(ScheduleCaches.SCHEDULES, null));
		}
		else {
			schedulesOnly.forEach((id) -> stale.add(new Stale(ScheduleCaches.SCHEDULES, id)));
		}
		return stale;
	}

}
