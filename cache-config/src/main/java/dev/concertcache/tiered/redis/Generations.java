package dev.concertcache.tiered.redis;

import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;

import dev.concertcache.tiered.gate.InvalidationWatermark;

/**
 * The generation of one cache as this instance knows it (ADR 0039): every key of an evict-all's cache moves to the
 * next generation at once. Unknown until read from Redis (at start, after a flush); never moves back.
 */
public final class Generations {

	public static final long UNKNOWN = -1;

	private final String cache;

	private final RedisTier redis;

	private final Clock clock;

	private final InvalidationWatermark watermark;

	/** Clears L1 when a confirmation finds a move that was not heard: its entries came from the old generation. */
	private final Runnable moved;

	/** When (watermark ticker) the counter was last read, {@link InvalidationWatermark#NEVER} before. */
	private volatile long confirmedAt = InvalidationWatermark.NEVER;

	private final AtomicLong generation = new AtomicLong(UNKNOWN);

	/**
	 * The highest generation heard of while this instance's own was unknown: a read of the counter that started
	 * before an evict-all message must not bring back the generation that message replaced.
	 */
	private final AtomicLong floor = new AtomicLong(UNKNOWN);

	public Generations(String cache, RedisTier redis, Clock clock, InvalidationWatermark watermark, Runnable moved) {
		this.cache = cache;
		this.redis = redis;
		this.clock = clock;
		this.watermark = watermark;
		this.moved = moved;
	}

	/**
	 * The generation reads use, read from Redis if unknown or if the stream has been silent for longer than
	 * {@code max-silence} since it was last read: meanwhile a writer may have moved it unheard (ADR 0039).
	 * @throws RedisUnavailableException if it has to be read and Redis cannot tell
	 */
	public long current() {
		long current = this.generation.get();
		if (current != UNKNOWN && this.watermark.covers(this.confirmedAt)) {
			return current;
		}
		long askedAt = this.watermark.now();
		long read = this.redis.generation(this.cache, this.clock.millis());
		if (current == UNKNOWN) {
			this.generation.compareAndSet(UNKNOWN, Math.max(read, this.floor.get()));
			// An advance that saw UNKNOWN raised the floor before this reads it.
			this.generation.accumulateAndGet(this.floor.get(), Math::max);
		}
		else if (adopt(read)) {
			this.moved.run();
		}
		this.confirmedAt = askedAt;
		return this.generation.get();
	}

	/** The generation as known, {@link #UNKNOWN} if none: evictions use it without reading Redis. */
	public long known() {
		return this.generation.get();
	}

	/**
	 * Moves to {@code current}, a generation Redis reported, if it is newer than the one this instance reads: the
	 * counter was evicted or flushed and started again (at the clock, so higher), and keys of the old generation
	 * may miss tombstones; the caller clears L1 then, whose entries came from the old one. Never moves back: a
	 * message sent before an evict-all this instance already applied names the generation before it.
	 * @return whether it moved, so that L1 must be cleared
	 */
	public boolean adopt(long current) {
		long known = this.generation.get();
		advance(current);
		return known != UNKNOWN && current > known;
	}

	/** Moves to {@code next} if it is newer (an evict-all of this instance or another). */
	public void advance(long next) {
		this.floor.accumulateAndGet(next, Math::max);
		this.generation.accumulateAndGet(next, (current, update) -> (current == UNKNOWN) ? UNKNOWN
				: Math.max(current, update));
	}

	/** Forgets the generation, after invalidations may have been lost: the next read asks Redis. */
	public void forget() {
		this.generation.set(UNKNOWN);
	}

}
