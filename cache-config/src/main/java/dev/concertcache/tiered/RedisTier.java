package dev.concertcache.tiered;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;

import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Every Redis call of the data path, each through the circuit breaker; a call that fails or is not permitted
 * throws {@link UnavailableException} and the caller carries on without Redis (ADR 0014).
 * <p>
 * Keys (ADR 0012): {@code <prefix>:v1:<cache>:g<generation>:<shape>:<key>} for values,
 * {@code <prefix>:v1:<cache>:lock:g<generation>:<shape>:<key>} for load locks, {@code <prefix>:v1:<cache>:generation}
 * for the generation counter, {@code <prefix>:v1:<cache>:shapes} for the value shapes in use (a sorted set scored by
 * how long a value of each may live); {@code <prefix>:invalidations} for the invalidation stream and
 * {@code <prefix>:invalidations:seq} for the number of its last message. The cache name has no {@code ':'}, so the
 * segment after it tells the kinds apart whatever the key holds.
 */
final class RedisTier {

	/**
	 * Returns the value if it is a fresh one, else takes the lock if free; reports what the key held (nothing, a
	 * tombstone, or a value kept only to be served stale). Freshness is the number after ARGV[4] (the envelope's
	 * {@code "f"}, epoch ms) compared with the caller's clock (ARGV[5]); a value without it is fresh. A caller that
	 * is about to load registers its shape (ARGV[6]) until ARGV[7]: an eviction during its load tombstones its key.
	 */
	private static final RedisScript<List> GET_OR_LOCK = RedisScript.of("""
			local v = redis.call('GET', KEYS[1])
			if v and string.sub(v, 1, #ARGV[3]) ~= ARGV[3] then
			  if string.sub(v, 1, #ARGV[4]) ~= ARGV[4] then return {'hit', v} end
			  local f = tonumber(string.match(v, '^%d+', #ARGV[4] + 1))
			  if not f or f > tonumber(ARGV[5]) then return {'hit', v} end
			end
			redis.call('ZADD', KEYS[3], 'GT', ARGV[7], ARGV[6])
			local seen = v or ''
			if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'locked', seen} end
			return {'wait', seen}
			""", List.class);

	/**
	 * Stores a loaded value only if the key still holds what the loader saw, keeping its shape (ARGV[5]) registered
	 * until the value expires (ARGV[6]); releases the loader's lock.
	 */
	private static final RedisScript<Long> STORE_IF_UNCHANGED = RedisScript.of("""
			local stored = 0
			if (redis.call('GET', KEYS[1]) or '') == ARGV[1] then
			  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
			  redis.call('ZADD', KEYS[3], 'GT', ARGV[6], ARGV[5])
			  stored = 1
			end
			if ARGV[4] ~= '' and redis.call('GET', KEYS[2]) == ARGV[4] then redis.call('DEL', KEYS[2]) end
			return stored
			""", Long.class);

	private static final RedisScript<Long> UNLOCK = RedisScript.of("""
			if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
			return 0
			""", Long.class);

	/**
	 * Tombstones the key under the cache's current generation (started at the caller's clock if the counter is
	 * gone) and under the caller's own if that differs, and announces it with that generation and the next
	 * sequence number, atomically; returns the generation. The current one, not the caller's: an instance whose
	 * counter was evicted or flushed away must not tombstone keys that the others no longer read (ADR 0013).
	 * Every shape registered (KEYS[4]) and not yet expired at ARGV[12] is tombstoned, and the caller's own
	 * (ARGV[11]): an instance of another version reads the same cache under its own shape's keys.
	 * The value keys are built here from ARGV[9], so this script is for a standalone Redis (or one slot).
	 */
	private static final RedisScript<Long> EVICT = RedisScript.of("""
			local g = redis.call('GET', KEYS[1])
			if not g then
			  redis.call('SET', KEYS[1], ARGV[10])
			  g = ARGV[10]
			end
			redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[12])
			local shapes = redis.call('ZRANGE', KEYS[4], 0, -1)
			table.insert(shapes, ARGV[11])
			local done = {}
			for _, s in ipairs(shapes) do
			  if not done[s] then
			    done[s] = true
			    redis.call('SET', ARGV[9] .. g .. ':' .. s .. ':' .. ARGV[5], ARGV[1], 'PX', ARGV[2])
			    if ARGV[6] ~= g and ARGV[6] ~= '-1' then
			      redis.call('SET', ARGV[9] .. ARGV[6] .. ':' .. s .. ':' .. ARGV[5], ARGV[1], 'PX', ARGV[2])
			    end
			  end
			end
			local seq = redis.call('INCR', KEYS[3])
			redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'cache', ARGV[4], 'key', ARGV[5], 'gen', g,
			  'seq', seq, 'origin', ARGV[7], 'sent', ARGV[8])
			return tonumber(g)
			""", Long.class);

	/**
	 * Reads the generation, starting one at the caller's clock (ms) if there is none: a counter lost to a restart
	 * or to memory eviction never brings back a generation that was used before.
	 */
	private static final RedisScript<Long> GENERATION = RedisScript.of("""
			redis.call('SET', KEYS[1], ARGV[1], 'NX')
			return tonumber(redis.call('GET', KEYS[1]))
			""", Long.class);

	/** Moves the cache to its next generation (at least the caller's clock in ms) and announces it, atomically. */
	private static final RedisScript<Long> EVICT_ALL = RedisScript.of("""
			local g = math.max(tonumber(redis.call('GET', KEYS[1]) or '0') + 1, tonumber(ARGV[5]))
			redis.call('SET', KEYS[1], g)
			local seq = redis.call('INCR', KEYS[3])
			redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*',
			  'cache', ARGV[2], 'key', '*', 'gen', g, 'seq', seq, 'origin', ARGV[3], 'sent', ARGV[4])
			return g
			""", Long.class);

	private final StringRedisTemplate redis;

	private final CircuitBreaker breaker;

	private final TieredCacheMetrics metrics;

	private final String keyPrefix;

	private final String namespace;

	private final String stream;

	private final String streamSequence;

	private final long streamMaxLength;

	RedisTier(StringRedisTemplate redis, CircuitBreaker breaker, TieredCacheMetrics metrics, String keyPrefix,
			long streamMaxLength) {
		this.redis = redis;
		this.breaker = breaker;
		this.metrics = metrics;
		this.keyPrefix = keyPrefix;
		this.namespace = keyPrefix + ":v" + JsonValueCodec.FORMAT_VERSION + ":";
		// Not under the format version: instances of every version in a rolling deploy hear each other.
		this.stream = keyPrefix + ":invalidations";
		this.streamSequence = InvalidationListener.sequenceKey(this.stream);
		this.streamMaxLength = streamMaxLength;
	}

	/**
	 * The same server and breaker, keys under {@code <key-prefix>:<child>} instead, errors counted in
	 * {@code metrics}.
	 */
	RedisTier child(String child, TieredCacheMetrics metrics) {
		return new RedisTier(this.redis, this.breaker, metrics, this.keyPrefix + ":" + child, this.streamMaxLength);
	}

	/** Deletes every key under this tier's key prefix (SCAN and UNLINK, never KEYS); returns how many. */
	long deleteAll() {
		List<String> keys = new ArrayList<>();
		ScanOptions options = ScanOptions.scanOptions().match(this.keyPrefix + ":*").count(1000).build();
		try (Cursor<String> cursor = this.redis.scan(options)) {
			cursor.forEachRemaining(keys::add);
		}
		if (keys.isEmpty()) {
			return 0;
		}
		Long deleted = this.redis.unlink(keys);
		return (deleted != null) ? deleted : 0;
	}

	String stream() {
		return this.stream;
	}

	CircuitBreaker breaker() {
		return this.breaker;
	}

	String valueKey(String cache, long generation, String shape, String key) {
		return this.namespace + cache + ":g" + generation + ":" + shape + ":" + key;
	}

	String lockKey(String cache, long generation, String shape, String key) {
		return this.namespace + cache + ":lock:g" + generation + ":" + shape + ":" + key;
	}

	String shapesKey(String cache) {
		return this.namespace + cache + ":shapes";
	}

	String generationKey(String cache) {
		return this.namespace + cache + ":generation";
	}

	long generation(String cache, long now) {
		return call(cache, "generation",
				() -> this.redis.execute(GENERATION, List.of(generationKey(cache)), String.valueOf(now)));
	}

	String get(String cache, String valueKey) {
		return call(cache, "get", () -> this.redis.opsForValue().get(valueKey));
	}

	/**
	 * One step of the distributed single flight.
	 * @param shape the caller's value shape, registered until {@code loadUntil} (epoch ms) unless the key holds a
	 * fresh value
	 * @param now the caller's clock (epoch ms), which a value's freshness is compared with
	 * @return the value if the key holds a fresh one; otherwise whether the lock was taken, and what the key held
	 * ({@code ""} for nothing, else a tombstone or a stale value)
	 */
	LockAttempt getOrLock(String cache, String valueKey, String lockKey, String token, long lockMillis, long now,
			String shape, long loadUntil) {
		List<?> result = call(cache, "lock",
				() -> this.redis.execute(GET_OR_LOCK, List.of(valueKey, lockKey, shapesKey(cache)), token,
						String.valueOf(lockMillis), JsonValueCodec.TOMBSTONE_PREFIX, JsonValueCodec.FRESH_UNTIL_PREFIX,
						String.valueOf(now), shape, String.valueOf(loadUntil)));
		String outcome = String.valueOf(result.get(0));
		String raw = (result.size() > 1 && result.get(1) != null) ? String.valueOf(result.get(1)) : "";
		return LockAttempt.of(outcome, raw);
	}

	/**
	 * Stores {@code value} if the key still holds {@code seen}, keeping {@code shape} registered for its
	 * {@code ttlMillis} from {@code now}; releases {@code token}'s lock if given.
	 */
	boolean storeIfUnchanged(String cache, String valueKey, String lockKey, String seen, String value, long ttlMillis,
			String token, String shape, long now) {
		Long stored = call(cache, "put",
				() -> this.redis.execute(STORE_IF_UNCHANGED, List.of(valueKey, lockKey, shapesKey(cache)), seen,
						value, String.valueOf(ttlMillis), (token != null) ? token : "", shape,
						String.valueOf(now + ttlMillis)));
		return stored != null && stored == 1;
	}

	void unlock(String cache, String lockKey, String token) {
		call(cache, "unlock", () -> this.redis.execute(UNLOCK, List.of(lockKey), token));
	}

	/**
	 * Tombstones {@code key} under the current generation and under {@code generation} (the caller's, -1 when it has
	 * none yet) and announces it, under every shape registered and {@code shape}; returns the current generation.
	 */
	long evict(String cache, String key, long generation, String shape, long tombstoneMillis, String origin,
			long now) {
		// Shapes are registered with other instances' clocks: drop one only when it is past by a tombstone's life.
		long expiredBefore = now - tombstoneMillis;
		Long current = callPastTheBreaker(cache, "evict",
				() -> this.redis.execute(EVICT,
						List.of(generationKey(cache), this.stream, this.streamSequence, shapesKey(cache)),
						JsonValueCodec.newTombstone(), String.valueOf(tombstoneMillis),
						String.valueOf(this.streamMaxLength), cache, key, String.valueOf(generation), origin,
						String.valueOf(now), this.namespace + cache + ":g", String.valueOf(now), shape,
						String.valueOf(expiredBefore)));
		return current;
	}

	long evictAll(String cache, String origin, long sentAt) {
		Long generation = callPastTheBreaker(cache, "evict",
				() -> this.redis.execute(EVICT_ALL, List.of(generationKey(cache), this.stream, this.streamSequence),
						String.valueOf(this.streamMaxLength), cache, origin, String.valueOf(sentAt),
						String.valueOf(sentAt)));
		return generation;
	}

	private <T> T call(String cache, String operation, Supplier<T> command) {
		try {
			return this.breaker.executeSupplier(command);
		}
		catch (CallNotPermittedException ex) {
			throw new UnavailableException(ex);
		}
		catch (RuntimeException ex) {
			this.metrics.error(cache, operation);
			throw new UnavailableException(ex);
		}
	}

	/**
	 * An invalidation goes past the breaker: the breaker sheds reads from a slow Redis, but an eviction that Redis
	 * can still take must land now, not wait in this process' memory while others serve the old value (issue 14,
	 * hole 3). Only a Redis that does not answer (the command timeout) makes it fail.
	 */
	private <T> T callPastTheBreaker(String cache, String operation, Supplier<T> command) {
		try {
			return command.get();
		}
		catch (RuntimeException ex) {
			this.metrics.error(cache, operation);
			throw new UnavailableException(ex);
		}
	}

	/**
	 * The result of {@link #getOrLock}: the fresh value ({@link Hit}), or what the key held ({@code ""} for nothing,
	 * a tombstone or a stale value) with the lock taken ({@link Locked}) or held by another loader ({@link Wait}).
	 */
	sealed interface LockAttempt {

		String raw();

		static LockAttempt of(String outcome, String raw) {
			return switch (outcome) {
				case "hit" -> new Hit(raw);
				case "locked" -> new Locked(raw);
				default -> new Wait(raw);
			};
		}

		record Hit(String raw) implements LockAttempt {
		}

		record Locked(String raw) implements LockAttempt {
		}

		record Wait(String raw) implements LockAttempt {
		}

	}

	/** Redis could not be used for this call; the read or write goes on without it. */
	static final class UnavailableException extends RuntimeException {

		UnavailableException(Throwable cause) {
			super(cause.getMessage(), cause, false, false);
		}

	}

}
