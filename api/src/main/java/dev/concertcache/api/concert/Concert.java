package dev.concertcache.api.concert;

import java.time.Instant;
import java.time.LocalDate;

import dev.concertcache.api.web.CachedJsonBody;

/**
 * A concert: one performance run at one venue, with its dated performances as schedules.
 */
@CachedJsonBody
public record Concert(long id, String title, String artist, String venue, String description, LocalDate startDate,
		LocalDate endDate, Instant updatedAt) {
}
