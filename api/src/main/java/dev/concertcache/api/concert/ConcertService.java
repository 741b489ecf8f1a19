package dev.concertcache.api.concert;

import java.time.Clock;
import java.util.List;
import java.util.Optional;

import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.Caching;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import dev.concertcache.api.schedule.ScheduleCaches;
import dev.concertcache.api.web.NotFoundException;
import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * Concert reads through the cache, and writes that evict what they make stale once they commit. The reads call
 * the tiers themselves: the {@link Lookup} says where the value came from and whether it is stale, which the
 * responses' {@code Cache-Status} and {@code Cache-Control} need and a {@code @Cacheable} method cannot return.
 */
@Service
class ConcertService {

	private final ConcertRepository repository;

	private final CursorCodec cursors;

	private final Clock clock;

	private final TieredCache<Long, Concert> concerts;

	private final TieredCache<PageKey, ConcertPage> pages;

	ConcertService(ConcertRepository repository, CursorCodec cursors, Clock clock, TieredCacheManager caches) {
		this.repository = repository;
		this.cursors = cursors;
		this.clock = clock;
		this.concerts = caches.getCache(ConcertCaches.CONCERT, Long.class, Concert.class);
		this.pages = caches.getCache(ConcertCaches.PAGES, PageKey.class, ConcertPage.class);
	}

	/** A list page; the lookup says whether it was served stale (the database failed). */
	Lookup<ConcertPage> page(String cursor, int size) {
		long afterId = (cursor != null && !cursor.isEmpty()) ? this.cursors.decode(cursor) : 0;
		PageKey key = new PageKey(afterId, size);
		return this.pages.lookup(key, () -> Optional.of(loadPage(key)));
	}

	/**
	 * The concert, present in the lookup; the lookup says whether it was served stale.
	 * @throws NotFoundException if there is no such concert
	 */
	Lookup<Concert> concert(long id) {
		Lookup<Concert> lookup = this.concerts.lookup(id, () -> this.repository.findById(id));
		if (lookup.value().isEmpty()) {
			throw new NotFoundException("concert", id);
		}
		return lookup;
	}

	// Writes evict through Spring's annotations (ADR 0016), on every instance and once the transaction has
	// committed. Every write moves, adds or removes a list entry: all pages go.

	/** Ids are sequential: a read of the next id may have cached "not found" for it and its schedules. */
	@Transactional
	@Caching(evict = { @CacheEvict(cacheNames = { ConcertCaches.CONCERT, ScheduleCaches.SCHEDULES }, key = "#result.id"),
			@CacheEvict(cacheNames = ConcertCaches.PAGES, allEntries = true) })
	Concert create(ConcertRequest request) {
		long id = this.repository.insert(request, this.clock.instant());
		return this.repository.findById(id).orElseThrow();
	}

	@Transactional
	@Caching(evict = { @CacheEvict(cacheNames = ConcertCaches.CONCERT, key = "#id"),
			@CacheEvict(cacheNames = ConcertCaches.PAGES, allEntries = true) })
	Concert update(long id, ConcertRequest request) {
		if (!this.repository.update(id, request, this.clock.instant())) {
			throw new NotFoundException("concert", id);
		}
		return this.repository.findById(id).orElseThrow();
	}

	@Transactional
	@Caching(evict = { @CacheEvict(cacheNames = { ConcertCaches.CONCERT, ScheduleCaches.SCHEDULES }, key = "#id"),
			@CacheEvict(cacheNames = ConcertCaches.PAGES, allEntries = true) })
	void delete(long id) {
		if (!this.repository.delete(id)) {
			throw new NotFoundException("concert", id);
		}
	}

	private ConcertPage loadPage(PageKey key) {
		// One row more than the page tells whether a next page exists without a COUNT.
		List<ConcertSummary> rows = this.repository.findPage(key.afterId(), key.size() + 1);
		if (rows.size() <= key.size()) {
			return new ConcertPage(rows, null);
		}
		List<ConcertSummary> items = List.copyOf(rows.subList(0, key.size()));
		return new ConcertPage(items, this.cursors.encode(items.get(items.size() - 1).id()));
	}

	/** A list page is identified by where it starts and how long it is. */
	record PageKey(long afterId, int size) {
	}

}
