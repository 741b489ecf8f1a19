package dev.concertcache.api.schedule;

import java.util.List;

import dev.concertcache.api.web.CachedJsonBody;

/**
 * The performances of one concert, by start time.
 */
@CachedJsonBody
public record ConcertSchedules(long concertId, List<Schedule> schedules) {
}
