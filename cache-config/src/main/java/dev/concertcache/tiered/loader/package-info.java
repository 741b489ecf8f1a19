/**
 * What a miss may cost while the loader (the database) fails (ADR 0030): every loader call goes through a cache's
 * {@link dev.concertcache.tiered.loader.LoaderGuard} (circuit breaker, then bulkhead), and
 * {@link dev.concertcache.tiered.loader.LoaderFailures} tells a database that cannot be reached from one that answers
 * but sheds a load. Knows nothing of the tiers: the cache core calls it.
 */
@NullMarked
package dev.concertcache.tiered.loader;

import org.jspecify.annotations.NullMarked;
