package dev.concertcache.tiered;

/**
 * A cached value of the tests.
 */
record Item(long id, String name) {
}
