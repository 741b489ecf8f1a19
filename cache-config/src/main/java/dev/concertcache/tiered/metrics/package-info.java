/**
 * The caches' Micrometer meters (ADR 0015); every package of the core counts here, and it knows nothing of the tiers.
 */
@NullMarked
package dev.concertcache.tiered.metrics;

import org.jspecify.annotations.NullMarked;
