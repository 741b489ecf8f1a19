package dev.concertcache.api.concert;

import java.util.List;

import dev.concertcache.api.web.CachedJsonBody;

/**
 * One page of the concert list and the cursor of the next one ({@code null} on the last page).
 */
@CachedJsonBody
public record ConcertPage(List<ConcertSummary> items, String nextCursor) {
}
