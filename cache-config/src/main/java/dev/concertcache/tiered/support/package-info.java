/**
 * The implementation of the API above: {@link dev.concertcache.tiered.support.DefaultTieredCacheManager}, the registry
 * of caches and the owner of their lifecycle (listener, retries, failovers, hot set), built with
 * {@link dev.concertcache.tiered.support.TieredCacheManagerBuilder}; {@link dev.concertcache.tiered.support.DefaultTieredCache},
 * one cache's read path (L1, the gate, Redis and its load lock, the loader, stale-if-error) and write path (tombstone
 * or generation move, announcement, then L1); the decorators the manager hands out (after-commit evictions, warm-up
 * routing, loader only) and the pass-through manager of the mode without a cache.
 */
@NullMarked
package dev.concertcache.tiered.support;

import org.jspecify.annotations.NullMarked;
