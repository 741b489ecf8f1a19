package dev.concertcache.tiered.eviction;

import java.util.function.LongUnaryOperator;

import dev.concertcache.tiered.gate.PendingEvictions;
import dev.concertcache.tiered.local.LocalTier;
import dev.concertcache.tiered.log.InvalidationStream;
import dev.concertcache.tiered.log.NotLandedAnnouncements;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;
import dev.concertcache.tiered.redis.Generations;
import dev.concertcache.tiered.redis.RedisLoadProtocol;
import dev.concertcache.tiered.redis.RedisTier;
import dev.concertcache.tiered.redis.RedisUnavailableException;

/**
 * One cache's evictions and the invalidations it hears (ADR 0039): an eviction tombstones the key in
 * Redis (or moves the cache's generation) and announces it, then clears L1; a message from another instance moves
 * the generation or clears the key; an eviction Redis did not take is pending until it lands.
 */
public final class CacheEvictions {

	private final String name;

	private final LocalTier<?> local;

	private final RedisTier redis;

	private final InvalidationStream stream;

	/** The value shape of this cache's instances: an eviction tombstones it even before it is registered. */
	private final String shape;

	private final RedisLoadProtocol.Settings settings;

	private final NotLandedAnnouncements notLanded;

	private final Generations generations;

	private final TieredCacheMetrics.ForCache metrics;

	public CacheEvictions(String name, LocalTier<?> local, RedisTier redis, InvalidationStream stream, String shape,
			RedisLoadProtocol.Settings settings, Generations generations, TieredCacheMetrics.ForCache metrics) {
		this.name = name;
		this.local = local;
		this.redis = redis;
		this.stream = stream;
		this.shape = shape;
		this.settings = settings;
		this.notLanded = new NotLandedAnnouncements(settings.ticker(), settings.maxSilence());
		this.generations = generations;
		this.metrics = metrics;
	}

	/** The name of the cache whose evictions these are. */
	public String name() {
		return this.name;
	}

	/**
	 * Evicts {@code key} (encoded) from L1 here and, through Redis, on every instance; queued if Redis is down.
	 * @return whether Redis took it
	 */
	public boolean evictNow(String key) {
		return taken(() -> evictInRedis(key));
	}

	/**
	 * Makes every entry of this cache unreachable on every instance; queued if Redis is down.
	 * @return whether Redis took it
	 */
	public boolean evictAllNow() {
		return taken(this::evictAllInRedis);
	}

	private static boolean taken(Runnable eviction) {
		try {
			eviction.run();
			return true;
		}
		catch (RedisUnavailableException ex) {
			return false;
		}
	}

	/**
	 * Tombstones the key in Redis and announces it, then clears it from L1; L1 is cleared even if Redis failed, and
	 * the key is pending then. In this order because a read between the two steps must not put the old value back:
	 * before the tombstone it can only find the old value in L1 (the write is not acknowledged yet), after it Redis
	 * holds the tombstone.
	 */
	public void evictInRedis(String key) {
		try {
			// Under the generation as known, not read: reading it would go through the breaker the eviction goes past.
			adoptGeneration(everywhere(key, "explicit", (now) -> this.redis.evict(this.name, key,
					this.generations.known(), this.shape, this.settings.tombstoneTtl().toMillis(), now)));
		}
		catch (RedisUnavailableException ex) {
			// Pending before L1 is cleared, as for evictAllInRedis.
			this.settings.gate().pending().add(this.name, key);
			throw ex;
		}
		finally {
			this.local.invalidate(key, "explicit");
		}
	}

	/**
	 * Moves the generation in Redis and here, then clears L1 (L1 even if Redis failed): a read in between either
	 * uses the new generation or puts its entry into L1 before it is cleared.
	 */
	public void evictAllInRedis() {
		try {
			this.generations.advance(everywhere(PendingEvictions.ALL, "generation",
					(now) -> this.redis.evictAll(this.name, now)));
		}
		catch (RedisUnavailableException ex) {
			// Pending before L1 is cleared: else a read that misses L1 because of this eviction finds Redis' old value
			// and keeps it (a read that starts while L1 is being cleared is not necessarily cleared with it).
			this.settings.gate().pending().add(this.name, PendingEvictions.ALL);
			throw ex;
		}
		finally {
			this.local.invalidateAll("explicit");
		}
	}

	/**
	 * Applies an invalidation message from another instance. The generation first: a read that starts after the
	 * L1 step must use the generation the message names.
	 */
	public void onInvalidation(String key, long generation) {
		this.metrics.received.increment();
		if (generation == InvalidationStream.NOT_LANDED) {
			// Redis still holds what the writer's eviction replaced: pending here too (before L1 is cleared, as for
			// this instance's own), so that reads go to the loader and the retry lands it once Redis is back.
			this.settings.gate().pending().add(this.name, key);
			this.notLanded.heard(key);
			if (PendingEvictions.ALL.equals(key)) {
				this.local.invalidateAll("remote");
			}
			else {
				this.local.invalidate(key, "remote");
			}
			return;
		}
		if (PendingEvictions.ALL.equals(key)) {
			this.generations.advance(generation);
			this.local.invalidateAll("remote");
			return;
		}
		if (adoptGeneration(generation)) {
			return;
		}
		this.local.invalidate(key, "remote");
	}

	/** Moves to a newer generation Redis reported, clearing L1 if it did (see {@link Generations#adopt}). */
	private boolean adoptGeneration(long current) {
		if (!this.generations.adopt(current)) {
			return false;
		}
		this.local.invalidateAll("generation");
		return true;
	}

	/**
	 * Moves to a newer generation, L1 kept: this instance's own evict-all heard back from the stream (L1 was cleared
	 * when it was made), or its own move after a failover, which makes stale what Redis holds, not L1 (ADR 0039).
	 */
	public void advanceGeneration(long next) {
		this.generations.advance(next);
	}

	/** Applies another instance's move after a failover: what Redis holds is stale, not L1 (ADR 0039). */
	public void onGenerationMoved(long generation) {
		this.metrics.received.increment();
		this.generations.advance(generation);
	}

	/** Forgets everything this instance knows, after invalidations may have been lost. */
	public void flush() {
		this.generations.forget();
		this.local.invalidateAll("flush");
	}

	/**
	 * Evicts {@code key} ({@link PendingEvictions#ALL} for the whole cache) in Redis with {@code evict} (given the
	 * time now) and announces it to every instance.
	 * @return the cache's generation, as Redis reports it
	 */
	private long everywhere(String key, String cause, LongUnaryOperator evict) {
		long generation;
		try {
			long now = this.settings.clock().millis();
			generation = evict.applyAsLong(now);
			this.stream.announce(this.name, key, generation, this.settings.instanceId(), now);
		}
		catch (RedisUnavailableException ex) {
			throw ex.told(announceNotLanded(key));
		}
		this.notLanded.landed(key);
		this.metrics.eviction("l2", cause);
		this.metrics.sent.increment();
		return generation;
	}

	/**
	 * Tells every instance, unless they were told within max-silence, that the eviction of {@code key} has not
	 * landed: each then keeps it pending as this one does, reading the key from the loader, not from Redis, until it
	 * lands (ADR 0039, "While a primary is down", rule 2).
	 * @return whether they have been told, now or then; if not (the stream down too), the others stop trusting L1
	 * within max-silence
	 */
	private boolean announceNotLanded(String key) {
		if (!this.notLanded.claim(key)) {
			return true;
		}
		try {
			this.stream.announce(this.name, key, InvalidationStream.NOT_LANDED, this.settings.instanceId(),
					this.settings.clock().millis());
			return true;
		}
		catch (RedisUnavailableException ex) {
			this.notLanded.notTold(key);
			return false;
		}
	}

}
