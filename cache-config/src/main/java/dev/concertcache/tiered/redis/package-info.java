/**
 * The Redis tier (L2, ADR 0010-0012): {@link dev.concertcache.tiered.redis.RedisTier} holds every key and script of
 * values, tombstones, generations, load locks, shape registrations and hot sets, behind its circuit breaker
 * ({@link dev.concertcache.tiered.redis.RedisCalls}); {@link dev.concertcache.tiered.redis.RedisLoadProtocol} is a
 * cache's read through it (get or lock, wait for another loader, store if unchanged, ADR 0011). It reads the gate's
 * state but knows nothing of the invalidation stream: what it evicts, its caller announces.
 */
@NullMarked
package dev.concertcache.tiered.redis;

import org.jspecify.annotations.NullMarked;
