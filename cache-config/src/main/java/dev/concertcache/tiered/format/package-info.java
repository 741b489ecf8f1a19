/**
 * How the tiers write what they hold (ADR 0012): the versioned value envelope and tombstone, the value type's shape,
 * a cache key's encoding and the digest of stored bytes. Knows nothing of the tiers that use it.
 */
@NullMarked
package dev.concertcache.tiered.format;

import org.jspecify.annotations.NullMarked;
