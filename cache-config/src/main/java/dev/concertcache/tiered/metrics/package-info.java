/**
 * The caches' Micrometer meters ({@link dev.concertcache.tiered.metrics.TieredCacheMetrics}): hits and misses per
 * tier, loads, evictions, invalidations sent and received, the change feed's lag, stale answers. Every package of the
 * core counts here; it knows nothing of the tiers.
 */
@NullMarked
package dev.concertcache.tiered.metrics;

import org.jspecify.annotations.NullMarked;
