/**
 * What an instance may serve from its tiers now (ADR 0039): {@link dev.concertcache.tiered.gate.FreshnessGate}, the one
 * gate the tiers ask before they serve, and what it goes by: how far the invalidation stream and the change feed's
 * confirmations were heard ({@link dev.concertcache.tiered.gate.InvalidationWatermark}, the feed's last position
 * {@link dev.concertcache.tiered.gate.ChangeFeedPosition}), whether the Redis server is known after a disconnect
 * ({@link dev.concertcache.tiered.gate.ServerConfirmation}) and the evictions Redis has not taken yet
 * ({@link dev.concertcache.tiered.gate.PendingEvictions}). State only, on the instance's ticker; it knows nothing of
 * the tiers.
 */
@NullMarked
package dev.concertcache.tiered.gate;

import org.jspecify.annotations.NullMarked;
