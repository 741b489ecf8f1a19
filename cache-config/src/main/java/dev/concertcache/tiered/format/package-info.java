/**
 * How the tiers write what they hold (ADR 0012): the versioned JSON envelope of a value or a tombstone
 * ({@link dev.concertcache.tiered.format.JsonValueCodec}), the value type's shape in every key
 * ({@link dev.concertcache.tiered.format.ValueShape}), a cache key's encoding
 * ({@link dev.concertcache.tiered.format.CacheKeyEncoder}) and the digest of stored bytes that lets an L1 entry
 * keep its value instance ({@link dev.concertcache.tiered.format.StoredDigest}). Knows nothing of the tiers that use it.
 */
@NullMarked
package dev.concertcache.tiered.format;

import org.jspecify.annotations.NullMarked;
