package dev.concertcache.tiered.redis;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.LongAdder;

import com.github.benmanes.caffeine.cache.Ticker;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.format.JsonValueCodec.OtherShapeException;
import dev.concertcache.tiered.format.JsonValueCodec.Stored;
import dev.concertcache.tiered.format.JsonValueCodec.UnreadableValueException;
import dev.concertcache.tiered.format.JsonValueCodec;
import dev.concertcache.tiered.format.StoredDigest;
import dev.concertcache.tiered.gate.FreshnessGate;
import dev.concertcache.tiered.local.L1Entry;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;

/**
 * One cache's reads and writes of Redis (ADR 0011, ADR 0039): a read that finds no fresh value takes the key's
 * load lock or waits for its holder's value; the loaded value is stored only if the key still holds what the
 * loader saw, so that an eviction during the load wins ({@code CacheEvictions} tombstones).
 *
 * @param <V> the value type
 */
public final class RedisLoadProtocol<V> {

	private static final Log logger = LogFactory.getLog(RedisLoadProtocol.class);

	private final String cache;

	private final RedisTier redis;

	private final JsonValueCodec<V> codec;

	private final Generations generations;

	private final TieredCacheConfiguration spec;

	private final Settings settings;

	private final TieredCacheMetrics.ForCache metrics;

	public RedisLoadProtocol(String cache, RedisTier redis, JsonValueCodec<V> codec, Generations generations,
			TieredCacheConfiguration spec, Settings settings, TieredCacheMetrics.ForCache metrics) {
		this.cache = cache;
		this.redis = redis;
		this.codec = codec;
		this.generations = generations;
		this.spec = spec;
		this.settings = settings;
		this.metrics = metrics;
	}

	/** The Redis key {@code key} (encoded) is stored under now. */
	public String valueKey(String key) {
		return this.redis.valueKey(this.cache, this.generations.current(), this.codec.shape(), key);
	}

	/**
	 * Reads {@code key} (encoded): a fresh value, or a miss to load (under the lock if this reader took it).
	 * @param previous the L1 entry past its freshness that this read refreshes, if any: if the key holds, fresh,
	 * the very bytes it was decoded from, the hit carries its value instance instead of decoding them again
	 */
	public RedisRead<V> read(String key, @Nullable L1Entry<V> previous) {
		return read(key, previous, -1, this.metrics.l2Hit, this.metrics.l2Miss);
	}

	/** {@link #read}, for refresh-ahead: its outcome counted apart from the callers' gets. */
	public RedisRead<V> refresh(String key, L1Entry<V> current) {
		return read(key, current, -1, this.metrics.refreshHit, this.metrics.refreshMiss);
	}

	/**
	 * {@link #read} while the change feed is behind (ADR 0039): Redis may lack the tombstones of changes committed
	 * since the feed last confirmed, so only a value read from the database at most {@code maxReadAge} ago (by the
	 * Redis server's clock) is a hit. Any other is loaded again under the load lock, which the instances of the
	 * fleet share: one of them loads a key, the others wait for its value.
	 */
	public RedisRead<V> readBehindTheFeed(String key, Duration maxReadAge) {
		return read(key, null, maxReadAge.toMillis(), this.metrics.l2Hit, this.metrics.l2Miss);
	}

	/** @param maxReadAge see {@link RedisTier#getOrLock}; negative for any */
	private RedisRead<V> read(String key, @Nullable L1Entry<V> previous, long maxReadAge, LongAdder hits,
			LongAdder misses) {
		long stamp = this.settings.gate().redisStamp(this.cache, key);
		if (stamp < 0) {
			return RedisRead.unavailable();
		}
		try {
			long generation = this.generations.current();
			String valueKey = this.redis.valueKey(this.cache, generation, this.codec.shape(), key);
			String lockKey = this.redis.lockKey(this.cache, generation, this.codec.shape(), key);
			if (previous == null) {
				// Nothing to compare the bytes with: the get-or-lock step reads the key itself, and a cold key costs
				// one round trip less than a read followed by it (ADR 0011).
				return firstGetOrLock(valueKey, lockKey, maxReadAge, stamp, hits, misses);
			}
			String raw = this.redis.get(this.cache, valueKey);
			if (raw != null && !JsonValueCodec.isTombstone(raw)) {
				if (!this.settings.gate().redisHolds(stamp)) {
					return RedisRead.unavailable();
				}
				StoredDigest digest = StoredDigest.of(raw);
				long now = this.settings.clock().millis();
				if (digest.equals(previous.digest)
						&& now < JsonValueCodec.freshUntilPrefix(raw)) {
					hits.increment();
					return new RedisRead.Hit<>(previous.value, digest);
				}
				Stored<V> stored = decode(raw);
				boolean fresh = stored != null && stored.isFreshAt(now);
				((fresh) ? hits : misses).increment();
				if (fresh) {
					return new RedisRead.Hit<>(stored.value(), digest);
				}
				if (stored == null) {
					// An unreadable value is replaced by the loaded one, without the lock: it is not a cold key.
					return new RedisRead.Load<>(valueKey, lockKey, raw, null, JsonValueCodec.UNKNOWN_READ);
				}
				// Kept only to be served stale: load it again like a cold key, remembering it for a failure.
			}
			else {
				misses.increment();
			}
			return awaitOrLock(valueKey, lockKey, (raw != null) ? raw : "", maxReadAge, stamp,
					UUID.randomUUID().toString(), lockDeadline());
		}
		catch (RedisUnavailableException ex) {
			return RedisRead.unavailable();
		}
	}

	/**
	 * What Redis holds under {@code key} (encoded) now, without the lock, as a failed load's candidate for a stale
	 * value when a read did not ask Redis (the change feed behind); unavailable where {@link #read} would be.
	 */
	public RedisRead<V> lastKnown(String key) {
		if (this.settings.gate().redisStamp(this.cache, key) < 0) {
			return RedisRead.unavailable();
		}
		try {
			String valueKey = this.redis.valueKey(this.cache, this.generations.current(), this.codec.shape(), key);
			String raw = this.redis.get(this.cache, valueKey);
			return (raw != null) ? new RedisRead.Load<>(valueKey, "", raw, null, JsonValueCodec.UNKNOWN_READ)
					: RedisRead.unavailable();
		}
		catch (RedisUnavailableException ex) {
			return RedisRead.unavailable();
		}
	}

	/**
	 * Reads {@code keys} (encoded) for a fill of L1 from the hot set: what {@link #read} would return as a hit for
	 * each, under the current generation and shape, {@code null} where it would not (nothing, a tombstone, a value
	 * kept only to be served stale, an unreadable one, a key this instance's own pending eviction covers). One
	 * round trip, no lock: a key Redis has no fresh value of is left to the first real read.
	 * @throws RedisUnavailableException if Redis cannot be used
	 */
	public List<RedisRead.@Nullable Hit<V>> readFresh(List<String> keys) {
		long stamp = this.settings.gate().server().stamp();
		if (stamp < 0) {
			throw new RedisUnavailableException(new IllegalStateException("The Redis server is not confirmed yet"));
		}
		long generation = this.generations.current();
		List<String> valueKeys = new ArrayList<>(keys.size());
		for (String key : keys) {
			valueKeys.add(this.redis.valueKey(this.cache, generation, this.codec.shape(), key));
		}
		List<String> raws = this.redis.multiGet(this.cache, valueKeys);
		if (!this.settings.gate().redisHolds(stamp)) {
			throw new RedisUnavailableException(new IllegalStateException("A Redis connection dropped during the fill"));
		}
		long now = this.settings.clock().millis();
		List<RedisRead.@Nullable Hit<V>> hits = new ArrayList<>(keys.size());
		for (int i = 0; i < keys.size(); i++) {
			String raw = raws.get(i);
			Stored<V> stored = (raw != null && !JsonValueCodec.isTombstone(raw)
					&& this.settings.gate().redisStamp(this.cache, keys.get(i)) >= 0) ? decode(raw) : null;
			hits.add((stored != null && stored.isFreshAt(now))
					? new RedisRead.Hit<>(stored.value(), StoredDigest.of(raw)) : null);
		}
		return hits;
	}

	/** The first step of a read with nothing to compare: the get-or-lock step, then as {@link #awaitOrLock}. */
	private RedisRead<V> firstGetOrLock(String valueKey, String lockKey, long maxReadAge, long stamp, LongAdder hits,
			LongAdder misses) {
		String token = UUID.randomUUID().toString();
		long deadline = lockDeadline();
		LockAttempt attempt = getOrLock(valueKey, lockKey, token, maxReadAge);
		RedisRead<V> read = outcome(attempt, valueKey, lockKey, stamp, token);
		if (read == RedisRead.<V>unavailable()) {
			return read;
		}
		((read instanceof RedisRead.Hit) ? hits : misses).increment();
		if (read != null) {
			return read;
		}
		if (!waitForHolder(deadline)) {
			return new RedisRead.Load<>(valueKey, lockKey, attempt.raw(), null, attempt.serverTime());
		}
		return awaitOrLock(valueKey, lockKey, attempt.raw(), maxReadAge, stamp, token, deadline);
	}

	/**
	 * Takes the load lock, or waits for its holder's value until the lock's time to live has passed.
	 * @param seen what the key held before ({@code ""} for nothing)
	 */
	private RedisRead<V> awaitOrLock(String valueKey, String lockKey, String seen, long maxReadAge, long stamp,
			String token, long deadline) {
		while (true) {
			LockAttempt attempt;
			try {
				attempt = getOrLock(valueKey, lockKey, token, maxReadAge);
			}
			catch (RedisUnavailableException ex) {
				return new RedisRead.Load<>(valueKey, lockKey, seen, null, JsonValueCodec.UNKNOWN_READ);
			}
			RedisRead<V> read = outcome(attempt, valueKey, lockKey, stamp, token);
			if (read != null) {
				return read;
			}
			if (!waitForHolder(deadline)) {
				// The holder is slow or gone: load without the lock rather than wait any longer.
				return new RedisRead.Load<>(valueKey, lockKey, attempt.raw(), null, attempt.serverTime());
			}
		}
	}

	private LockAttempt getOrLock(String valueKey, String lockKey, String token, long maxReadAge) {
		long now = this.settings.clock().millis();
		// Registered for as long as this load may still store its value (see store()).
		return this.redis.getOrLock(this.cache, valueKey, lockKey, token, this.settings.lockTtl().toMillis(), now,
				maxReadAge, this.codec.shape(), now + this.settings.tombstoneTtl().toMillis());
	}

	/** What a get-or-lock step read or took; {@code null} if another loader holds the lock. */
	private @Nullable RedisRead<V> outcome(LockAttempt attempt, String valueKey, String lockKey, long stamp,
			String token) {
		if (attempt instanceof LockAttempt.Hit hit) {
			if (!this.settings.gate().redisHolds(stamp)) {
				return RedisRead.unavailable();
			}
			Stored<V> stored = decode(hit.raw());
			// An unreadable value is replaced by the loaded one, without the lock: it is not a cold key.
			return (stored != null) ? new RedisRead.Hit<>(stored.value(), StoredDigest.of(hit.raw()), readAgo(stored, hit))
					: new RedisRead.Load<>(valueKey, lockKey, hit.raw(), null, hit.serverTime());
		}
		if (attempt instanceof LockAttempt.Locked locked) {
			return new RedisRead.Load<>(valueKey, lockKey, locked.raw(), token, locked.serverTime());
		}
		return null;
	}

	/** How long before the attempt the value was read from the database, by the server's clock. */
	private static long readAgo(Stored<?> stored, LockAttempt attempt) {
		return (stored.readAt() != JsonValueCodec.UNKNOWN_READ && attempt.serverTime() != JsonValueCodec.UNKNOWN_READ)
				? Math.max(0, attempt.serverTime() - stored.readAt()) : RedisRead.Hit.UNKNOWN_AGE;
	}

	private long lockDeadline() {
		return System.nanoTime() + this.settings.lockTtl().toNanos();
	}

	/** Waits one poll interval for the lock's holder; {@code false} once the lock's time to live has passed. */
	private boolean waitForHolder(long deadline) {
		return System.nanoTime() - deadline < 0 && pause();
	}

	private boolean pause() {
		try {
			Thread.sleep(this.settings.lockPollInterval().toMillis());
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * Stores what the loader returned if the key still holds what it saw, and releases the lock.
	 * @param started the ticker time the read began
	 * @return the digest of the bytes stored, {@code null} if nothing was
	 */
	public @Nullable StoredDigest store(RedisRead.Load<V> load, Optional<V> loaded, long started) {
		long elapsed = this.settings.ticker().read() - started;
		try {
			if (elapsed >= this.settings.tombstoneTtl().toNanos() / 2) {
				// A tombstone set during this load may have expired already: the compare below could not see it.
				unlock(load);
				return null;
			}
			long ttl = this.spec.l2Millis(loaded.isEmpty());
			String encoded;
			try {
				encoded = this.codec.encode(loaded, this.settings.clock().millis() + ttl, load.readAt());
			}
			catch (RuntimeException ex) {
				this.metrics.error("serialize");
				logger.warn("Cannot write a value of cache '" + this.cache + "' as JSON", ex);
				unlock(load);
				return null;
			}
			boolean stored = this.redis.storeIfUnchanged(this.cache, load.valueKey(), load.lockKey(), load.seen(),
					encoded, ttl + this.spec.l2StaleMillis(loaded.isEmpty()), load.token(), this.codec.shape(),
					this.settings.clock().millis());
			return (stored) ? StoredDigest.of(encoded) : null;
		}
		catch (RedisUnavailableException ex) {
			// Redis is down or slow: the value is served from L1 only, which is what the breaker is for.
			return null;
		}
	}

	/** Releases the load lock if this reader holds it; one that Redis cannot take expires by itself. */
	public void unlockQuietly(RedisRead<V> read) {
		if (read instanceof RedisRead.Load<V> load) {
			try {
				unlock(load);
			}
			catch (RedisUnavailableException ex) {
				// The lock expires by itself.
			}
		}
	}

	private void unlock(RedisRead.Load<V> load) {
		if (load.token() != null) {
			this.redis.unlock(this.cache, load.lockKey(), load.token());
		}
	}

	public @Nullable Stored<V> decode(String raw) {
		try {
			return this.codec.decode(raw);
		}
		catch (UnreadableValueException ex) {
			this.metrics.error((ex instanceof OtherShapeException) ? "shape" : "deserialize");
			if (logger.isDebugEnabled()) {
				logger.debug("Unreadable value in cache '" + this.cache + "', treated as a miss: " + ex.getMessage());
			}
			return null;
		}
	}

	/**
	 * What every cache of a manager shares: its clocks, its freshness gate, its identity in invalidation messages and
	 * the load lock's timing.
	 */
	public record Settings(Ticker ticker, Clock clock, FreshnessGate gate, String instanceId,
			Duration lockTtl, Duration lockPollInterval, Duration tombstoneTtl, Duration maxSilence) {
	}

}
