package dev.concertcache.api.concert;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

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

	/**
	 * The page sizes kept in the cache, ascending: the default one, which clients and the warm-up use, and the
	 * largest allowed, which serves every other size.
	 */
	static final int[] CACHED_PAGE_SIZES = { ConcertController.DEFAULT_PAGE_SIZE, ConcertController.MAX_PAGE_SIZE };

	private final ConcertRepository repository;

	private final CursorCodec cursors;

	private final ConcertCaches changes;

	private final Clock clock;

	private final TieredCache<Long, Concert> concerts;

	private final TieredCache<PageKey, ConcertPage> pages;

	/**
	 * The slices of each cached page by size, kept as long as the page (weak keys, by identity): a slice is then
	 * one value too, serialized and tagged once (ADR 0034), not once per request.
	 */
	private final Cache<ConcertPage, Map<Integer, ConcertPage>> slices = Caffeine.newBuilder().weakKeys().build();

	ConcertService(ConcertRepository repository, CursorCodec cursors, ConcertCaches changes, Clock clock,
			TieredCacheManager caches) {
		this.repository = repository;
		this.cursors = cursors;
		this.changes = changes;
		this.clock = clock;
		this.concerts = caches.getCache(ConcertCaches.CONCERT, Long.class, Concert.class);
		this.pages = caches.getCache(ConcertCaches.PAGES, PageKey.class, ConcertPage.class);
	}

	/**
	 * A list page; the lookup says whether it was served stale (the database failed). Only pages of the
	 * {@link #CACHED_PAGE_SIZES} are cached; a page of another size is the start of the next larger one, so a
	 * crawler that varies the size cannot multiply the keys in Redis (issue 14, hole 11).
	 */
	Lookup<ConcertPage> page(String cursor, int size) {
		long afterId = (cursor != null && !cursor.isEmpty()) ? this.cursors.decode(cursor) : 0;
		PageKey key = new PageKey(afterId, cachedSize(size));
		Lookup<ConcertPage> lookup = this.pages.lookup(key, () -> Optional.of(loadPage(key)));
		if (key.size() == size) {
			return lookup;
		}
		return new Lookup<>(lookup.value().map((page) -> slice(page, size)), lookup.stale(), lookup.source());
	}

	private static int cachedSize(int size) {
		for (int cached : CACHED_PAGE_SIZES) {
			if (size <= cached) {
				return cached;
			}
		}
		throw new IllegalArgumentException("Page size " + size + " is above " + ConcertController.MAX_PAGE_SIZE);
	}

	private ConcertPage slice(ConcertPage page, int size) {
		return this.slices.get(page, (key) -> new ConcurrentHashMap<>()).computeIfAbsent(size, (n) -> start(page, n));
	}

	/** The first {@code size} items of a longer page: keyset pages of one start share their first items. */
	private ConcertPage start(ConcertPage page, int size) {
		if (page.items().size() <= size) {
			return page;
		}
		List<ConcertSummary> items = page.items().subList(0, size);
		return new ConcertPage(items, this.cursors.encode(items.get(size - 1).id()));
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
