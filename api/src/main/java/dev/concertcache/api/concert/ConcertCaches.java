package dev.concertcache.api.concert;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Component;

import dev.concertcache.api.schedule.ScheduleCaches;
import dev.concertcache.tiered.InvalidationFailedException;
import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * What a change of a concert makes stale, in one place for every path that learns of one: this service's own
 * writes, the invalidation endpoint and the binary log. A changed concert (inserted, updated or deleted) makes
 * stale the concert (a cached "not found" included: ids are sequential, so a read may have cached the next one's
 * absence), its schedules (deleting a concert deletes them by ON DELETE CASCADE, which the binary log does not
 * show as rows), the block of the list that holds its id and the end of the list (an insert or a delete may move
 * it), ADR 0036: list pages are put together from those, so no other page goes stale.
 */
@Component
public class ConcertCaches {

	/** One concert by id. */
	static final String CONCERT = "concert";

	/** The list in blocks of consecutive ids ({@link ListBlocks}). */
	static final String LIST = "concert-list";

	/** The end of the list (the highest id), one entry. */
	static final String LIST_END = "concert-list-end";

	/** The one key of {@link #LIST_END}. */
	static final String LIST_END_KEY = "end";

	/** The caches a concert change touches, as the invalidation endpoint reports them. */
	public static final List<String> CACHES = List.of(CONCERT, ScheduleCaches.SCHEDULES, LIST, LIST_END);

	private final TieredCache<Long, Concert> concerts;

	private final TieredCache<Long, ListBlock> list;

	private final TieredCache<String, ListEnd> listEnd;

	private final ListBlocks blocks;

	private final ScheduleCaches schedules;

	ConcertCaches(TieredCacheManager caches, ListBlocks blocks, ScheduleCaches schedules) {
		this.concerts = caches.getCache(CONCERT, Long.class, Concert.class);
		this.list = caches.getCache(LIST, Long.class, ListBlock.class);
		this.listEnd = caches.getCache(LIST_END, String.class, ListEnd.class);
		this.blocks = blocks;
		this.schedules = schedules;
	}

	/**
	 * Evicts what the change of concert {@code id} makes stale once the current transaction commits: this
	 * instance at once (read-your-writes), the others through Redis; the binary log repairs an eviction Redis
	 * did not take.
	 */
	void evictChanged(long id) {
		this.concerts.evict(id);
		this.schedules.evict(id);
		this.list.evict(this.blocks.of(id));
		this.listEnd.evict(LIST_END_KEY);
	}

	/**
	 * Invalidates now, on every tier of every instance, what the change of these concerts makes stale, for
	 * callers that hold a durable record of the change (a request, the binary log) and repeat it on failure, so
	 * nothing is queued in memory. Repeating is harmless. Every one is tried even after one failed: a tombstone
	 * Redis takes protects readers while the stream cannot announce it (ADR 0039, "While a primary is down", rule 2).
	 * @throws InvalidationFailedException the first failure, if Redis did not take one of the invalidations
	 */
	public void invalidateChanged(Collection<Long> ids) {
		invalidateEach(staleAfter(ids));
	}

	/**
	 * Invalidates every concert, every concert's schedules and the whole list now: after a change whose rows
	 * are not known (TRUNCATE, DDL, a lost binlog position) or too many to name one by one.
	 * @throws InvalidationFailedException if Redis did not take one of the invalidations
	 */
	public void invalidateAll() {
		invalidateEach(everyCache());
	}

	/** The entries a change of these concerts makes stale, each once, in the order they are invalidated. */
	public Set<Stale> staleAfter(Collection<Long> ids) {
		Set<Stale> stale = new LinkedHashSet<>();
		Set<Long> changedBlocks = new LinkedHashSet<>();
		for (long id : ids) {
			stale.add(new Stale(CONCERT, id));
			stale.add(new Stale(ScheduleCaches.SCHEDULES, id));
			changedBlocks.add(this.blocks.of(id));
		}
		for (long block : changedBlocks) {
			stale.add(new Stale(LIST, block));
		}
		if (!ids.isEmpty()) {
			stale.add(new Stale(LIST_END, LIST_END_KEY));
		}
		return stale;
	}

	/** Each cache of {@link #CACHES} as a whole. */
	public List<Stale> everyCache() {
		return CACHES.stream().map((cache) -> new Stale(cache, null)).toList();
	}

	/**
	 * Invalidates one entry, or one whole cache, on every tier of every instance now.
	 * @throws InvalidationFailedException if Redis did not take it
	 */
	public void invalidate(Stale stale) {
		switch (stale.cache()) {
			case CONCERT -> invalidate(this.concerts, (Long) stale.key());
			case ScheduleCaches.SCHEDULES -> {
				if (stale.key() == null) {
					this.schedules.invalidateAll();
				}
				else {
					this.schedules.invalidate((Long) stale.key());
				}
			}
			case LIST -> invalidate(this.list, (Long) stale.key());
			case LIST_END -> invalidate(this.listEnd, (String) stale.key());
			default -> throw new IllegalArgumentException("Not a cache a concert change touches: " + stale.cache());
		}
	}

	private void invalidateEach(Collection<Stale> stale) {
		InvalidationFailures failures = new InvalidationFailures();
		for (Stale each : stale) {
			failures.run(() -> invalidate(each));
		}
		failures.rethrowFirstFailure();
	}

	private static <K> void invalidate(TieredCache<K, ?> cache, K key) {
		if (key == null) {
			cache.invalidateAll();
		}
		else {
			cache.invalidate(key);
		}
	}

	/**
	 * One entry of one of {@link #CACHES} that a change makes stale, or with {@code key} {@code null} the whole
	 * cache.
	 */
	public record Stale(String cache, @Nullable Object key) {
	}

}
