package dev.concertcache.api.capture;

import java.util.List;

import dev.concertcache.api.concert.ConcertCaches;
import dev.concertcache.api.concert.ConcertCaches.Stale;

/** The cache entries committed changes make stale, and their invalidation on every tier of every instance. */
interface StaleCaches {

	/** What {@code changes} make stale. */
	List<Stale> stale(TransactionChanges changes);

	/**
	 * Invalidates {@code stale} on every tier of every instance now.
	 * @throws dev.concertcache.tiered.InvalidationFailedException if Redis did not take it
	 */
	void invalidate(Stale stale);

	/** The concert feature's caches, above {@code maxKeys} keys of one cache that whole cache. */
	static StaleCaches of(ConcertCaches caches, int maxKeys) {
		return new StaleCaches() {

			@Override
			public List<Stale> stale(TransactionChanges changes) {
				return changes.stale(caches, maxKeys);
			}

			@Override
			public void invalidate(Stale stale) {
				caches.invalidate(stale);
			}

		};
	}

}
