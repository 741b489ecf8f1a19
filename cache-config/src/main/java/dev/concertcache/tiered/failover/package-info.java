/**
 * What the caches do when another Redis server takes over (ADR 0039, "Failover rule"): a new generation once per
 * failover for the fleet, told apart from a restart by a cluster's topology or a server's {@code run_id}.
 */
@NullMarked
package dev.concertcache.tiered.failover;

import org.jspecify.annotations.NullMarked;
