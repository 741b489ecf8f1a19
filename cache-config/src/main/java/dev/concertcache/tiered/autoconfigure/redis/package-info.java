/**
 * Lettuce client settings and the Redis connection budget of the two-tier cache: Boot customizers that make the
 * cache tier fail fast instead of queueing, and a start-up check against the server's {@code maxclients}
 * (ADR 0020).
 */
@NullMarked
package dev.concertcache.tiered.autoconfigure.redis;

import org.jspecify.annotations.NullMarked;
