package dev.concertcache.tiered.support;

/**
 * A cached value of the tests.
 */
record Item(long id, String name) {
}
