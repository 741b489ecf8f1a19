package dev.concertcache.api.invalidation;

import java.util.List;

import dev.concertcache.api.concert.ConcertCaches;

/**
 * What an invalidation request made every instance forget.
 *
 * @param concertIds the concerts, without repeats: their {@code concert} and {@code schedules} entries
 * @param caches the caches invalidated: {@code concert}, {@code schedules} and the block of {@code concert-list} of
 * those ids, and {@code concert-list-end}
 */
record InvalidationResponse(List<Long> concertIds, List<String> caches) {

	static final List<String> CACHES = ConcertCaches.CACHES;

}
