/**
 * Evictions (ADR 0014, ADR 0039): {@link dev.concertcache.tiered.eviction.CacheEvictions} evicts a key or a
 * whole cache in Redis, announces it on the invalidation log, then clears L1, and applies what other instances
 * announce; an eviction Redis did not take stays pending, and
 * {@link dev.concertcache.tiered.eviction.PendingEvictionRetry} sends it again until it lands.
 */
@NullMarked
package dev.concertcache.tiered.eviction;

import org.jspecify.annotations.NullMarked;
