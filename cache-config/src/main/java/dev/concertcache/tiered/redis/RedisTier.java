package dev.concertcache.tiered.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;

import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import dev.concertcache.tiered.format.JsonValueCodec;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;

/**
 * Every Redis call of the data path, each through the circuit breaker; a call that fails or is not permitted
 * throws {@link RedisUnavailableException} and the caller carries on without Redis (ADR 0014).
 * <p>
 * Keys (ADR 0012, ADR 0039): {@code <prefix>:v1:<cache>:g<generation>:<shape>:{<cache>:<key>}} for values,
 * {@code <prefix>:v1:<cache>:lock:g<generation>:<shape>:{<cache>:<key>}} for load locks,
 * {@code <prefix>:v1:<cache>:generation} for the generation counter (and
 * {@code {<prefix>:v1:<cache>:generation}:failover} for the last cluster failover it was moved for and
 * {@code {<prefix>:v1:<cache>:generation}:primary:<run_id>} for each standalone primary it was moved for),
 * {@code <prefix>:v1:<cache>:shapes} for the value shapes in use (a sorted set scored by how long a value of each
 * may live); {@code <prefix>:invalidations} for the invalidation stream, {@code {<prefix>:invalidations}:seq}
 * for the number of its last message and {@code {<prefix>:invalidations}:feed} for a change feed's checkpoint.
 * The cache name has no {@code ':'}, so the segment after it tells the kinds apart whatever the key holds.
 * <p>
 * Every script touches one hash slot, so the same keys work on a standalone Redis and on Redis Cluster: a value,
 * its lock and its tombstones of every generation and shape share the hash tag {@code {<cache>:<key>}} (never
 * empty, so keys of one cache spread over the slots); a key of a counter and the keys that must change with it
 * take the counter's whole name as their tag. An eviction is three steps in three slots instead of one script
 * (read the generation and the shapes, tombstone, announce); ADR 0039 says why that keeps its guarantees.
 */
public final class RedisTier {

	/**
	 * Returns the value if it is a fresh one, else takes the lock if free; reports what the key held (nothing, a
	 * tombstone, or a value kept only to be served stale). Freshness is the number after ARGV[4] (the envelope's
	 * {@code "f"}, epoch ms) compared with the caller's clock (ARGV[5]); a value without it is fresh. With ARGV[6]
	 * not empty, a value is fresh only if it was also read from the database at most that many ms ago by this
	 * server's clock (the envelope's {@code "r"}, right after {@code "f"}, set from the time this script returns
	 * with the lock). Every outcome carries that time.
	 * The caller has registered its shape before (see {@link ShapeRegistrations#register}): an eviction during its
	 * load tombstones its key.
	 */
	private static final RedisScript<List> GET_OR_LOCK = RedisScript.of("""
			local t = redis.call('TIME')
			local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
			local time = string.format('%.0f', now)
			local v = redis.call('GET', KEYS[1])
			if v and string.sub(v, 1, #ARGV[3]) ~= ARGV[3] then
			  local fresh = true
			  if string.sub(v, 1, #ARGV[4]) == ARGV[4] then
			    local f = tonumber(string.match(v, '^%d+', #ARGV[4] + 1))
			    fresh = not f or f > tonumber(ARGV[5])
			  end
			  if fresh and ARGV[6] ~= '' then
			    local r = tonumber(string.match(v, '^%d+,"r":(%d+)', #ARGV[4] + 1))
			    fresh = r ~= nil and now - r <= tonumber(ARGV[6])
			  end
			  if fresh then return {'hit', v, time} end
			end
			local seen = v or ''
			if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'locked', seen, time} end
			return {'wait', seen, time}
			""", List.class);

	/** Stores a loaded value only if the key still holds what the loader saw; releases the loader's lock. */
	private static final RedisScript<Long> STORE_IF_UNCHANGED = RedisScript.of("""
			local stored = 0
			if (redis.call('GET', KEYS[1]) or '') == ARGV[1] then
			  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
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
	 * Drops the shapes registered until before ARGV[1] (other instances' clocks: past by a tombstone's life) and
	 * returns the others.
	 */
	private static final RedisScript<List> SHAPES = RedisScript.of("""
			redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
			return redis.call('ZRANGE', KEYS[1], 0, -1)
			""", List.class);

	/** Sets every key (one slot: one cache key under several generations and shapes) to the tombstone ARGV[1]. */
	private static final RedisScript<Long> TOMBSTONE = RedisScript.of("""
			for _, k in ipairs(KEYS) do redis.call('SET', k, ARGV[1], 'PX', ARGV[2]) end
			return #KEYS
			""", Long.class);

	/**
	 * Reads the generation, starting one at the caller's clock (ms) if there is none: a counter lost to a restart
	 * or to memory eviction never brings back a generation that was used before.
	 */
	private static final RedisScript<Long> GENERATION = RedisScript.of("""
			redis.call('SET', KEYS[1], ARGV[1], 'NX')
			return tonumber(redis.call('GET', KEYS[1]))
			""", Long.class);

	/** Moves the cache to its next generation, at least the caller's clock in ms. */
	private static final RedisScript<Long> NEXT_GENERATION = RedisScript.of("""
			local g = math.max(tonumber(redis.call('GET', KEYS[1]) or '0') + 1, tonumber(ARGV[1]))
			redis.call('SET', KEYS[1], g)
			return g
			""", Long.class);

	/**
	 * Moves the generation as {@link #NEXT_GENERATION} does unless it was moved for this failover (ARGV[2], the
	 * cluster's highest config epoch) or a later one already; returns the generation, negated if this call moved it.
	 */
	private static final RedisScript<Long> GENERATION_AFTER_FAILOVER = RedisScript.of("""
			if tonumber(redis.call('GET', KEYS[2]) or '-1') >= tonumber(ARGV[2]) then
			  return tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
			end
			redis.call('SET', KEYS[2], ARGV[2])
			local g = math.max(tonumber(redis.call('GET', KEYS[1]) or '0') + 1, tonumber(ARGV[1]))
			redis.call('SET', KEYS[1], g)
			return -g
			""", Long.class);

	/**
	 * Moves the generation as {@link #NEXT_GENERATION} does unless it was moved for this primary already (the marker
	 * KEYS[2], named after the primary's {@code run_id}, set for ARGV[2] ms); returns the generation, negated if this
	 * call moved it.
	 */
	private static final RedisScript<Long> GENERATION_FOR_NEW_PRIMARY = RedisScript.of("""
			if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then
			  return tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
			end
			local g = math.max(tonumber(redis.call('GET', KEYS[1]) or '0') + 1, tonumber(ARGV[1]))
			redis.call('SET', KEYS[1], g)
			return -g
			""", Long.class);

	/**
	 * How long the marker of a new primary lives: the fleet reacts within seconds; it only must not pile up.
	 */
	private static final Duration PRIMARY_MARKER_TTL = Duration.ofDays(1);

	private final StringRedisTemplate redis;

	private final RedisCalls calls;

	private final String keyPrefix;

	private final String namespace;

	private final RedisHotSets hotSets;

	private final ShapeRegistrations shapes;

	public RedisTier(StringRedisTemplate redis, CircuitBreaker breaker, TieredCacheMetrics metrics, String keyPrefix,
			Runnable moved) {
		this(redis, new RedisCalls(breaker, metrics, moved), keyPrefix);
	}

	private RedisTier(StringRedisTemplate redis, RedisCalls calls, String keyPrefix) {
		this.redis = redis;
		this.calls = calls;
		if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
			// A brace before the hash tags would make Redis Cluster hash a value and its lock apart.
			throw new IllegalArgumentException("Key prefix '" + keyPrefix + "' must not contain '{' or '}'");
		}
		this.keyPrefix = keyPrefix;
		this.namespace = keyPrefix + ":v" + JsonValueCodec.FORMAT_VERSION + ":";
		this.hotSets = new RedisHotSets(redis, calls, this.namespace);
		this.shapes = new ShapeRegistrations(redis, calls, this::shapesKey);
	}

	/**
	 * The same server and breaker, keys under {@code <key-prefix>:<child>} instead, errors counted in
	 * {@code metrics}.
	 */
	public RedisTier child(String child, TieredCacheMetrics metrics) {
		return new RedisTier(this.redis, this.calls.countingIn(metrics), this.keyPrefix + ":" + child);
	}

	/** Deletes every key under this tier's key prefix (SCAN and UNLINK, never KEYS); returns how many. */
	public long deleteAll() {
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

	/** The server this tier writes to. */
	public StringRedisTemplate template() {
		return this.redis;
	}

	/** How this tier's commands go past or through its breaker. */
	public RedisCalls calls() {
		return this.calls;
	}

	/** The prefix of every key of this tier. */
	public String keyPrefix() {
		return this.keyPrefix;
	}

	public String valueKey(String cache, long generation, String shape, String key) {
		return this.namespace + cache + ":g" + generation + ":" + shape + ":" + hashTag(cache, key);
	}

	public String lockKey(String cache, long generation, String shape, String key) {
		return this.namespace + cache + ":lock:g" + generation + ":" + shape + ":" + hashTag(cache, key);
	}

	private static String hashTag(String cache, String key) {
		return "{" + cache + ":" + key + "}";
	}

	private String failoverKey(String cache) {
		return "{" + generationKey(cache) + "}:failover";
	}

	private String primaryKey(String cache, String runId) {
		return "{" + generationKey(cache) + "}:primary:" + runId;
	}

	/**
	 * Forgets which shapes this instance registered: after a flush or a failover, Redis may have lost the
	 * registrations.
	 */
	public void forgetRegistrations() {
		this.shapes.forget();
	}

	/** The caches' hot sets in this tier's namespace. */
	public RedisHotSets hotSets() {
		return this.hotSets;
	}

	/**
	 * The values of {@code valueKeys}, in order, {@code null} for a missing one: one MGET (which the cluster client
	 * splits by slot).
	 */
	public List<String> multiGet(String cache, List<String> valueKeys) {
		List<String> values = this.calls.withBreaker(cache, "get", () -> this.redis.opsForValue().multiGet(valueKeys));
		return (values != null) ? values : Collections.nCopies(valueKeys.size(), null);
	}

	public String shapesKey(String cache) {
		return this.namespace + cache + ":shapes";
	}

	public String generationKey(String cache) {
		return this.namespace + cache + ":generation";
	}

	public long generation(String cache, long now) {
		return this.calls.withBreaker(cache, "generation",
				() -> this.redis.execute(GENERATION, List.of(generationKey(cache)), String.valueOf(now)));
	}

	public String get(String cache, String valueKey) {
		return this.calls.withBreaker(cache, "get", () -> this.redis.opsForValue().get(valueKey));
	}

	/**
	 * One step of the distributed single flight.
	 * @param shape the caller's value shape, registered until {@code loadUntil} (epoch ms) unless the key holds a
	 * fresh value
	 * @param now the caller's clock (epoch ms), which a value's freshness is compared with
	 * @param maxReadAge how long ago (ms, by the server's clock) a fresh value may have been read from the
	 * database, negative for any age
	 * @return the value if the key holds a fresh one; otherwise whether the lock was taken, and what the key held
	 * ({@code ""} for nothing, else a tombstone or a stale value)
	 */
	public LockAttempt getOrLock(String cache, String valueKey, String lockKey, String token, long lockMillis, long now,
			long maxReadAge, String shape, long loadUntil) {
		// Before the key is read: an eviction that reads the shapes after this tombstones the key this load stores.
		this.shapes.register(cache, shape, loadUntil);
		List<?> result = this.calls.withBreaker(cache, "lock",
				() -> this.redis.execute(GET_OR_LOCK, List.of(valueKey, lockKey), token,
						String.valueOf(lockMillis), JsonValueCodec.TOMBSTONE_PREFIX, JsonValueCodec.FRESH_UNTIL_PREFIX,
						String.valueOf(now), (maxReadAge < 0) ? "" : String.valueOf(maxReadAge)));
		String outcome = String.valueOf(result.get(0));
		String raw = (result.size() > 1 && result.get(1) != null) ? String.valueOf(result.get(1)) : "";
		long serverTime = (result.size() > 2 && result.get(2) != null) ? Long.parseLong(String.valueOf(result.get(2)))
				: JsonValueCodec.UNKNOWN_READ;
		return LockAttempt.of(outcome, raw, serverTime);
	}

	/**
	 * Stores {@code value} if the key still holds {@code seen}, keeping {@code shape} registered for its
	 * {@code ttlMillis} from {@code now}; releases {@code token}'s lock if given.
	 */
	public boolean storeIfUnchanged(String cache, String valueKey, String lockKey, String seen, String value, long ttlMillis,
			String token, String shape, long now) {
		// Registered until the value expires before it is stored: an eviction until then tombstones it.
		this.shapes.register(cache, shape, now + ttlMillis);
		Long stored = this.calls.withBreaker(cache, "put",
				() -> this.redis.execute(STORE_IF_UNCHANGED, List.of(valueKey, lockKey), seen, value,
						String.valueOf(ttlMillis), (token != null) ? token : ""));
		return stored != null && stored == 1;
	}

	public void unlock(String cache, String lockKey, String token) {
		this.calls.withBreaker(cache, "unlock", () -> this.redis.execute(UNLOCK, List.of(lockKey), token));
	}

	/**
	 * Tombstones {@code key} under the current generation and under {@code generation} (the caller's, -1 when it has
	 * none yet), under every shape registered and {@code shape}; returns the current generation, for the caller to
	 * announce.
	 * <p>
	 * Three calls, one slot each: read the generation, read the shapes, tombstone the key (its hash tag). A load that
	 * stores under a generation newer than the one read here started after this eviction did (that generation did not
	 * exist before), so after the write: a tombstone under it is not needed (ADR 0039).
	 */
	public long evict(String cache, String key, long generation, String shape, long tombstoneMillis, long now) {
		Long current = this.calls.pastTheBreaker(cache, "evict",
				() -> this.redis.execute(GENERATION, List.of(generationKey(cache)), String.valueOf(now)));
		// Shapes are registered with other instances' clocks: drop one only when it is past by a tombstone's life.
		List<?> registeredShapes = this.calls.pastTheBreaker(cache, "evict",
				() -> this.redis.execute(SHAPES, List.of(shapesKey(cache)), String.valueOf(now - tombstoneMillis)));
		Set<String> shapes = new LinkedHashSet<>();
		registeredShapes.forEach((each) -> shapes.add(String.valueOf(each)));
		shapes.add(shape);
		List<String> keys = new ArrayList<>();
		for (String each : shapes) {
			keys.add(valueKey(cache, current, each, key));
			if (generation != current && generation != -1) {
				keys.add(valueKey(cache, generation, each, key));
			}
		}
		this.calls.pastTheBreaker(cache, "evict", () -> this.redis.execute(TOMBSTONE, keys, JsonValueCodec.newTombstone(),
				String.valueOf(tombstoneMillis)));
		return current;
	}

	/** Moves {@code cache} to its next generation; returns it, for the caller to announce. */
	public long evictAll(String cache, long sentAt) {
		return this.calls.pastTheBreaker(cache, "evict",
				() -> this.redis.execute(NEXT_GENERATION, List.of(generationKey(cache)), String.valueOf(sentAt)));
	}

	/**
	 * Moves {@code cache} to a new generation after the cluster failed over to config epoch {@code epoch}, once
	 * per epoch whichever instance asks first.
	 */
	public GenerationMove evictAllAfterFailover(String cache, long epoch, long now) {
		return moveOnce(cache, GENERATION_AFTER_FAILOVER, failoverKey(cache), String.valueOf(epoch), now);
	}

	/**
	 * Moves {@code cache} to a new generation after a standalone connection (a Sentinel's, say) found another
	 * primary behind it, {@code runId}: once per primary whichever instance asks first.
	 */
	public GenerationMove evictAllForNewPrimary(String cache, String runId, long now) {
		return moveOnce(cache, GENERATION_FOR_NEW_PRIMARY, primaryKey(cache, runId),
				String.valueOf(PRIMARY_MARKER_TTL.toMillis()), now);
	}

	private GenerationMove moveOnce(String cache, RedisScript<Long> script, String marker, String argument, long now) {
		Long result = this.calls.pastTheBreaker(cache, "evict", () -> this.redis.execute(script,
				List.of(generationKey(cache), marker), String.valueOf(now), argument));
		// The scripts answer a generation this call moved to negated.
		return new GenerationMove(Math.abs(result), result < 0);
	}

	/**
	 * The generation a cache is at after a move that happens once for the fleet, and whether this call moved it (then
	 * the caller announces it).
	 */
	public record GenerationMove(long generation, boolean moved) {
	}

}
