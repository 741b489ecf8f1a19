package dev.concertcache.api.ceiling;

import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.stream.LongStream;

import org.springframework.context.annotation.Profile;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.concertcache.api.concert.ConcertSummary;
import dev.concertcache.api.schedule.Schedule;

/**
 * The ceiling of the stack itself, for the load tests: bare Spring MVC endpoints shaped like the three the
 * journey reads (a list page, a concert, its schedules), answering fixed data of the same shape and size with
 * no cache and no database, serialized by Jackson on every request as a bare endpoint is. {@code loadtests/run.sh
 * --ceiling} replays the same journey against them, so the load generator does the same work in both runs and
 * the difference is what the cache path costs. Only under the {@code ceiling} profile.
 */
@RestController
@RequestMapping("/api/ceiling/concerts")
@Profile("ceiling")
class CeilingController {

	private static final LocalDate START = LocalDate.of(2026, 7, 11);

	private final CeilingPage page = new CeilingPage(LongStream.rangeClosed(1, 20)
		.mapToObj((id) -> new ConcertSummary(id, "Coldplay Spring Memories #" + id, "Coldplay", "Sejong Center",
				START, START.plusDays(1)))
		.toList(), "AQAAAAAAAAAU47qwQHAjqtq5OTL8");

	private final List<Schedule> schedules = List.of(new Schedule(1, Instant.parse("2026-07-11T19:30:00Z"), 28500),
			new Schedule(2, Instant.parse("2026-07-12T19:30:00Z"), 28500));

	record CeilingPage(List<ConcertSummary> items, String nextCursor) {
	}

	record CeilingConcert(long id, String title, String artist, String venue, String description,
			LocalDate startDate, LocalDate endDate, Instant updatedAt) {
	}

	record CeilingSchedules(long concertId, List<Schedule> schedules) {
	}

	/** The cursor and size are accepted and ignored: every page is the same. */
	@GetMapping
	CeilingPage concerts(@RequestParam(required = false) String cursor,
			@RequestParam(defaultValue = "20") int size) {
		return this.page;
	}

	@GetMapping("/{id}")
	CeilingConcert concert(@PathVariable long id) {
		return new CeilingConcert(id, "Coldplay Spring Memories #1", "Coldplay", "Sejong Center",
				"Coldplay Spring Memories #1 at Sejong Center: 2 nights.", START, START.plusDays(1),
				Instant.parse("2025-12-01T00:00:00Z"));
	}

	@GetMapping("/{id}/schedules")
	CeilingSchedules schedules(@PathVariable long id) {
		return new CeilingSchedules(id, this.schedules);
	}

}
