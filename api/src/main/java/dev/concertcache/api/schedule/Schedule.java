package dev.concertcache.api.schedule;

import java.time.Instant;

/**
 * One dated performance of a concert.
 */
public record Schedule(long id, Instant startsAt, int totalSeats) {
}
