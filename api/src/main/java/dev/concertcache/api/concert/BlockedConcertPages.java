package dev.concertcache.api.concert;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.stereotype.Component;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * Pages put together from the cached blocks of ids they span and the cached end of the list (ADR 0036), so that a
 * write of one concert makes stale one block, not every page. A page is as fresh as the entries it was made from:
 * each is invalidated on its own, by this instance's writes, the stream and the binary log.
 */
@Component
@ConditionalOnExpression(ConcertPages.CACHE_ON)
class BlockedConcertPages implements ConcertPages {

	/**
	 * Blocks one page may walk before it reads the database directly: past this, the ids it spans are too sparse
	 * for blocks of this size (a gap of unused ids), and walking their empty blocks would cost more than the query.
	 */
	static final int MAX_BLOCKS_WALKED = 16;

	/**
	 * Bounds the pages kept put together (up to 100 concerts each, shared with their blocks); a client that varies
	 * sizes and cursors only churns them.
	 */
	private static final long MAX_ASSEMBLED_PAGES = 2_000;

	private final TieredCache<Long, ListBlock> blocks;

	private final TieredCache<String, ListEnd> end;

	private final ListBlocks layout;

	private final ConcertRepository repository;

	private final CursorCodec cursors;

	private final QueriedConcertPages queried;

	private final Supplier<Optional<ListEnd>> endLoader;

	/**
	 * Each page as last put together, with the block instances it came from: while a walk finds the same instances
	 * (L1 hits), the page is the same instance too, so its JSON and ETag are made once (ADR 0034), not per request.
	 */
	private final Cache<PageKey, Assembled> assembled = Caffeine.newBuilder()
		.maximumSize(MAX_ASSEMBLED_PAGES)
		.build();

	BlockedConcertPages(TieredCacheManager caches, ListBlocks layout, ConcertRepository repository,
			CursorCodec cursors) {
		this.blocks = caches.getCache(ConcertCaches.LIST, Long.class, ListBlock.class);
		this.end = caches.getCache(ConcertCaches.LIST_END, String.class, ListEnd.class);
		this.layout = layout;
		this.repository = repository;
		this.cursors = cursors;
		this.queried = new QueriedConcertPages(repository, cursors);
		this.endLoader = () -> Optional.of(new ListEnd(repository.lastId()));
	}

	@Override
	public Lookup<ConcertPage> page(long afterId, int size) {
		Lookup<ListEnd> endLookup = this.end.lookup(ConcertCaches.LIST_END_KEY, this.endLoader);
		long lastId = endLookup.value().orElseThrow().lastId();
		boolean stale = endLookup.stale();
		Source source = endLookup.source();
		ListBlock[] walked = new ListBlock[MAX_BLOCKS_WALKED];
		int count = 0;
		int items = 0;
		for (long block = this.layout.of(afterId + 1); items < size && this.layout.firstId(block) <= lastId; block++) {
			if (count == MAX_BLOCKS_WALKED) {
				return this.queried.page(afterId, size);
			}
			Lookup<ListBlock> lookup = this.blocks.lookup(block, blockLoader(block));
			ListBlock value = lookup.value().orElseThrow();
			stale |= lookup.stale();
			source = (lookup.source().compareTo(source) > 0) ? lookup.source() : source;
			walked[count++] = value;
			items += after(value, afterId);
		}
		// Exactly a page: the last block's last item ends it, and the end of the list says whether more follow.
		boolean more = (items > size) || (items == size && lastOf(walked[count - 1]) < lastId);
		return new Lookup<>(Optional.of(page(new PageKey(afterId, size), walked, count, more)), stale, source);
	}

	private Supplier<Optional<ListBlock>> blockLoader(long block) {
		return () -> Optional
			.of(new ListBlock(this.repository.findRange(this.layout.firstId(block), this.layout.lastId(block))));
	}

	private ConcertPage page(PageKey key, ListBlock[] walked, int count, boolean more) {
		Assembled previous = this.assembled.getIfPresent(key);
		if (previous != null && previous.madeFrom(walked, count, more)) {
			return previous.page();
		}
		List<ConcertSummary> items = new ArrayList<>(key.size());
		for (int i = 0; i < count && items.size() < key.size(); i++) {
			for (ConcertSummary item : walked[i].items()) {
				if (item.id() > key.afterId() && items.size() < key.size()) {
					items.add(item);
				}
			}
		}
		String next = more ? this.cursors.encode(items.get(items.size() - 1).id()) : null;
		ConcertPage page = new ConcertPage(List.copyOf(items), next);
		this.assembled.put(key, new Assembled(references(walked, count), more, page));
		return page;
	}

	/** Weak, so that a page kept here does not keep a block L1 has dropped. */
	@SuppressWarnings("unchecked")
	private static WeakReference<ListBlock>[] references(ListBlock[] walked, int count) {
		WeakReference<ListBlock>[] references = new WeakReference[count];
		for (int i = 0; i < count; i++) {
			references[i] = new WeakReference<>(walked[i]);
		}
		return references;
	}

	/** How many of the block's concerts come after {@code afterId}. */
	private static int after(ListBlock block, long afterId) {
		List<ConcertSummary> items = block.items();
		int first = 0;
		while (first < items.size() && items.get(first).id() <= afterId) {
			first++;
		}
		return items.size() - first;
	}

	private static long lastOf(ListBlock block) {
		return block.items().get(block.items().size() - 1).id();
	}

	/** A page by where it starts and how long it is. */
	private record PageKey(long afterId, int size) {
	}

	/** A page and the block instances it was put together from. */
	private record Assembled(WeakReference<ListBlock>[] blocks, boolean more, ConcertPage page) {

		boolean madeFrom(ListBlock[] walked, int count, boolean more) {
			if (count != this.blocks.length || more != this.more) {
				return false;
			}
			for (int i = 0; i < count; i++) {
				if (walked[i] != this.blocks[i].get()) {
					return false;
				}
			}
			return true;
		}

	}

}
