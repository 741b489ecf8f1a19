/**
 * The fleet's hot set (ADR 0202): publishing each instance's hottest L1 keys and filling a starting instance's L1
 * from them; it sees the caches only as {@link dev.concertcache.tiered.hotset.HotSetMember}s.
 */
@NullMarked
package dev.concertcache.tiered.hotset;

import org.jspecify.annotations.NullMarked;
