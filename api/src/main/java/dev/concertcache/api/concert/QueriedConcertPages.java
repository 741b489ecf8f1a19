package dev.concertcache.api.concert;

import java.util.List;
import java.util.Optional;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.stereotype.Component;

import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCache.Source;

/**
 * Pages read from the database, one query each, under mode {@code none}: walking blocks would cost a query per
 * block where there is no cache to keep them.
 */
@Component
@ConditionalOnExpression(ConcertPages.CACHE_OFF)
class QueriedConcertPages implements ConcertPages {

	private final ConcertRepository repository;

	private final CursorCodec cursors;

	QueriedConcertPages(ConcertRepository repository, CursorCodec cursors) {
		this.repository = repository;
		this.cursors = cursors;
	}

	@Override
	public Lookup<ConcertPage> page(long afterId, int size) {
		// One row more than the page tells whether a next page exists without a COUNT.
		List<ConcertSummary> rows = this.repository.findPage(afterId, size + 1);
		List<ConcertSummary> items = List.copyOf(rows.subList(0, Math.min(size, rows.size())));
		String next = (rows.size() > size) ? this.cursors.encode(items.get(size - 1).id()) : null;
		return Lookup.fresh(Optional.of(new ConcertPage(items, next)), Source.LOADER);
	}

}
