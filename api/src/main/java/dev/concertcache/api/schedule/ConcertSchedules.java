package dev.concertcache.api.schedule;

import java.util.List;

/**
 * The performances of one concert, by start time.
 */
public record ConcertSchedules(long concertId, List<Schedule> schedules) {
}
