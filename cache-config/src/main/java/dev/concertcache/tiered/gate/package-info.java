/**
 * What an instance may serve from its tiers (ADR 0035, ADR 0037): the invalidations it has heard up to
 * ({@link dev.concertcache.tiered.gate.InvalidationWatermark}), how recently the change feed confirmed that both tiers
 * hold every committed change ({@link dev.concertcache.tiered.gate.ChangeFeedWatermark}), the Redis server it has
 * confirmed ({@link dev.concertcache.tiered.gate.ServerConfirmation}) and the evictions Redis has not taken yet
 * ({@link dev.concertcache.tiered.gate.PendingEvictions}). State only, on the instance's clocks: the tiers ask it
 * before they serve; it knows nothing of them.
 */
@NullMarked
package dev.concertcache.tiered.gate;

import org.jspecify.annotations.NullMarked;
