package dev.concertcache.api.concert;

import java.time.Clock;
import java.util.List;
import java.util.Optional;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import dev.concertcache.api.web.NotFoundException;
import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * Concert reads through the cache, and writes that evict what they make stale once they commit.
 */
@Service
class ConcertService {

	private final ConcertRepository repository;

	private final CursorCodec cursors;

	private final ConcertCaches changes;

	private final Clock clock;

	private final TieredCache<Long, Concert> concerts;

	private final TieredCache<PageKey, ConcertPage> pages;

	ConcertService(ConcertRepository repository, CursorCodec cursors, ConcertCaches changes, Clock clock,
			TieredCacheManager caches) {
		this.repository = repository;
		this.cursors = cursors;
		this.changes = changes;
		this.clock = clock;
		this.concerts = caches.getCache("concert", Long.class, Concert.class);
		this.pages = caches.getCache("concert-page", PageKey.class, ConcertPage.class);
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

	@Transactional
	Concert create(ConcertRequest request) {
		long id = this.repository.insert(request, this.clock.instant());
		this.changes.evictChanged(id);
		return this.repository.findById(id).orElseThrow();
	}

	@Transactional
	Concert update(long id, ConcertRequest request) {
		if (!this.repository.update(id, request, this.clock.instant())) {
			throw new NotFoundException("concert", id);
		}
		this.changes.evictChanged(id);
		return this.repository.findById(id).orElseThrow();
	}

	@Transactional
	void delete(long id) {
		if (!this.repository.delete(id)) {
			throw new NotFoundException("concert", id);
		}
		this.changes.evictChanged(id);
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
