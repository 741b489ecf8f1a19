/**
 * Failovers (ADR 0039, "Failover rule"): another Redis primary may lack the last tombstones, so
 * {@link dev.concertcache.tiered.failover.FailoverGenerations} moves every cache to a new generation once per failover
 * for the fleet, and flushes L1 when the invalidation stream itself may have lost messages. On a cluster the
 * topology's config epoch tells a failover from a restart ({@code ClusterFailovers}); elsewhere the server's
 * {@code run_id} that the invalidation listener reports.
 */
@NullMarked
package dev.concertcache.tiered.failover;

import org.jspecify.annotations.NullMarked;
