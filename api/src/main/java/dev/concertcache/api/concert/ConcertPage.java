package dev.concertcache.api.concert;

import java.util.List;

/**
 * One page of the concert list and the cursor of the next one ({@code null} on the last page).
 */
public record ConcertPage(List<ConcertSummary> items, String nextCursor) {
}
