/**
 * The hot set (ADR 0202): every instance publishes its hottest L1 keys to Redis, and an instance that starts fills
 * its L1 with the fleet's hottest keys before it serves ({@link dev.concertcache.tiered.hotset.HotSetExchange}). It
 * sees the caches only as {@link dev.concertcache.tiered.hotset.HotSetMember}s.
 */
@NullMarked
package dev.concertcache.tiered.hotset;

import org.jspecify.annotations.NullMarked;
