/**
 * What an instance may serve from its tiers now (ADR 0039), and the state that decides it: the invalidations and the
 * change feed's confirmations heard, the Redis server confirmed, pending evictions. Knows nothing of the tiers.
 */
@NullMarked
package dev.concertcache.tiered.gate;

import org.jspecify.annotations.NullMarked;
