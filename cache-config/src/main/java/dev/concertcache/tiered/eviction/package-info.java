/**
 * A cache's evictions (ADR 0014, ADR 0039): in Redis, on the invalidation log and in L1, the invalidations other
 * instances announce, and the retry of evictions Redis did not take.
 */
@NullMarked
package dev.concertcache.tiered.eviction;

import org.jspecify.annotations.NullMarked;
