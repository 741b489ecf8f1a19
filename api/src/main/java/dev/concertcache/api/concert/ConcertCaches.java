package dev.concertcache.api.concert;

import org.springframework.stereotype.Component;

import dev.concertcache.api.concert.ConcertService.PageKey;
import dev.concertcache.tiered.InvalidationFailedException;
import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * The concert caches as seen by callers that replay changes from a durable record (the binary log): each call
 * evicts from every tier of every instance now, or throws.
 */
@Component
public class ConcertCaches {

	/** One concert by id. */
	static final String CONCERT = "concert";

	/** The keyset pages of the list. */
	static final String PAGES = "concert-page";

	private final TieredCache<Long, Concert> concerts;

	private final TieredCache<PageKey, ConcertPage> pages;

	ConcertCaches(TieredCacheManager caches) {
		this.concerts = caches.getCache(CONCERT, Long.class, Concert.class);
		this.pages = caches.getCache(PAGES, PageKey.class, ConcertPage.class);
	}

	/**
	 * Invalidates the concert {@code id} (a cached "not found" included).
	 * @throws InvalidationFailedException if Redis did not take it
	 */
	public void invalidate(long id) {
		this.concerts.invalidate(id);
	}

	/**
	 * Invalidates every cached concert.
	 * @throws InvalidationFailedException if Redis did not take it
	 */
	public void invalidateAll() {
		this.concerts.invalidateAll();
	}

	/**
	 * Invalidates every list page: any concert change may move, add or remove an entry.
	 * @throws InvalidationFailedException if Redis did not take it
	 */
	public void invalidatePages() {
		this.pages.invalidateAll();
	}

}
