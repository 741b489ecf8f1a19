package dev.concertcache.api.capture;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Redis lease that makes one instance the fleet's reader of the binary log, and the position it has
 * processed. The position is written only by the lease's holder, checked in the same script, so that an instance
 * that lost the lease (paused, partitioned) cannot move the position back or past what the new holder did. A
 * lease that lapsed while its holder could not reach Redis, and that nobody took meanwhile, is taken back by its
 * holder's next renewal or position: a reader that kept reading through a Redis outage goes on without a replay.
 * Redis errors propagate.
 */
class CaptureLease {

	private static final RedisScript<Long> HOLD = RedisScript.of("""
			local holder = redis.call('get', KEYS[1])
			if holder == ARGV[1] then
				return redis.call('pexpire', KEYS[1], ARGV[2])
			end
			if not holder then
				redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
				return 1
			end
			return 0""", Long.class);

	private static final RedisScript<Long> RELEASE = RedisScript.of("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
				return redis.call('del', KEYS[1])
			end
			return 0""", Long.class);

	private static final RedisScript<Long> SAVE_POSITION = RedisScript.of("""
			local holder = redis.call('get', KEYS[1])
			if holder == ARGV[1] or not holder then
				if not holder then
					redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[3])
				end
				redis.call('set', KEYS[2], ARGV[2])
				return 1
			end
			return 0""", Long.class);

	private final StringRedisTemplate redis;

	private final String leaderKey;

	private final String positionKey;

	private final Duration ttl;

	private final String token = UUID.randomUUID().toString();

	CaptureLease(StringRedisTemplate redis, String keyPrefix, Duration ttl) {
		this.redis = redis;
		// One hash tag: the position is stored only by the lease's holder, in one script, which a Redis Cluster
		// runs only on keys of one slot (ADR 0035).
		this.leaderKey = "{" + keyPrefix + ":capture}:leader";
		this.positionKey = "{" + keyPrefix + ":capture}:position";
		this.ttl = ttl;
	}

	Duration ttl() {
		return this.ttl;
	}

	/**
	 * Extends the lease if this instance holds it, or takes it if nobody does; false if another instance holds it.
	 */
	boolean hold() {
		Long held = this.redis.execute(HOLD, List.of(this.leaderKey), this.token, String.valueOf(this.ttl.toMillis()));
		return held != null && held == 1;
	}

	/** Gives the lease up, if held, so that a standby takes over without waiting for the TTL. */
	void release() {
		this.redis.execute(RELEASE, List.of(this.leaderKey), this.token);
	}

	/** The stored position, or {@code null} if there is none (first start, or Redis lost it). */
	BinlogPosition position() {
		return BinlogPosition.parse(this.redis.opsForValue().get(this.positionKey));
	}

	/** Stores {@code position} if this instance holds the lease or nobody does; false if another instance does. */
	boolean savePosition(BinlogPosition position) {
		Long saved = this.redis.execute(SAVE_POSITION, List.of(this.leaderKey, this.positionKey), this.token,
				position.format(), String.valueOf(this.ttl.toMillis()));
		return saved != null && saved == 1;
	}

}
