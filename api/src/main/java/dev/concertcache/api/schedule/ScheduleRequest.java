package dev.concertcache.api.schedule;

import java.time.Instant;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;

/**
 * The body of a schedule create or update.
 */
record ScheduleRequest(@NotNull Instant startsAt, @NotNull @Positive @Max(ScheduleRequest.MAX_SEATS) Integer totalSeats) {

	/** Larger than any stadium: a bigger number is a typo, not a venue. */
	static final int MAX_SEATS = 1_000_000;

}
