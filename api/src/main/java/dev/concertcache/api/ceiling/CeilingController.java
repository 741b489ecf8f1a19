package dev.concertcache.api.ceiling;

import java.time.LocalDate;
import java.util.List;
import java.util.stream.LongStream;

import org.springframework.context.annotation.Profile;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.concertcache.api.concert.ConcertSummary;

/**
 * The ceiling of the stack itself, for the load tests: a bare Spring MVC endpoint returning a fixed list
 * page of the same shape and size as {@code GET /api/concerts}, with no cache and no database. Only under
 * the {@code ceiling} profile.
 */
@RestController
@Profile("ceiling")
class CeilingController {

	private final CeilingPage page = new CeilingPage(LongStream.rangeClosed(1, 20)
		.mapToObj((id) -> new ConcertSummary(id, "Coldplay Spring Memories #" + id, "Coldplay", "Sejong Center",
				LocalDate.of(2026, 7, 11), LocalDate.of(2026, 7, 12)))
		.toList(), "AQAAAAAAAAAU47qwQHAjqtq5OTL8");

	/** The list page's shape, but serialized by Jackson on every request, as a bare endpoint is. */
	record CeilingPage(List<ConcertSummary> items, String nextCursor) {
	}

	@GetMapping("/api/ceiling/concerts")
	CeilingPage concerts() {
		return this.page;
	}

}
