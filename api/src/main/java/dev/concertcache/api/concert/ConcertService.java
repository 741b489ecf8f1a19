package dev.concertcache.api.concert;

import java.time.Clock;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

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

	private final ConcertCaches changes;

	private final Clock clock;

	private final TieredCache<Long, Concert> concerts;

	private final ConcertPages pages;

	ConcertService(ConcertRepository repository, CursorCodec cursors, ConcertCaches changes, Clock clock,
			TieredCacheManager caches, ConcertPages pages) {
		this.repository = repository;
		this.cursors = cursors;
		this.changes = changes;
		this.clock = clock;
		this.concerts = caches.getCache(ConcertCaches.CONCERT, Long.class, Concert.class);
		this.pages = pages;
	}

	/** A list page; the lookup says whether it was served stale (the database failed). */
	Lookup<ConcertPage> page(String cursor, int size) {
		long afterId = (cursor != null && !cursor.isEmpty()) ? this.cursors.decode(cursor) : 0;
		return this.pages.page(afterId, size);
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

	// Writes evict through ConcertCaches, the one mapping of a concert change that the invalidation endpoint and
	// the binary log use too; a schedule write is a plain @CacheEvict (ADR 0016).

	/** Ids are sequential: a read of the next id may have cached "not found" for it and its schedules. */
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

}
