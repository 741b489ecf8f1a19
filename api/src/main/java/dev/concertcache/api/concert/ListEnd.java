package dev.concertcache.api.concert;

/**
 * The highest concert id, 0 without concerts: where the list ends, so that a page does not walk blocks past it.
 */
record ListEnd(long lastId) {
}
