package dev.concertcache.api.concert;

import java.time.LocalDate;

/**
 * A concert as the list shows it: no description, to keep pages small.
 */
public record ConcertSummary(long id, String title, String artist, String venue, LocalDate startDate,
		LocalDate endDate) {
}
