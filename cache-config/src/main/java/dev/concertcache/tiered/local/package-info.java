/**
 * The local tier (L1, ADR 0010): each cache's Caffeine map of {@link dev.concertcache.tiered.local.L1Entry}s (value,
 * fresh-until and stale-until times, where it came from), the single flight of this instance's loads, refresh-ahead,
 * and the gate's checks before an entry is served. What a miss does ({@link dev.concertcache.tiered.local.Loads}) is
 * the cache's: this package knows nothing of Redis.
 */
@NullMarked
package dev.concertcache.tiered.local;

import org.jspecify.annotations.NullMarked;
