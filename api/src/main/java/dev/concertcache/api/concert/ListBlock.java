package dev.concertcache.api.concert;

import java.util.List;

/**
 * The concerts of one block of ids (ADR 0036), by id; empty where every id of the block is unused.
 */
record ListBlock(List<ConcertSummary> items) {
}
