package dev.concertcache.api.capture;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Redis lease that makes one instance the fleet's reader of the binary log. Where reading starts is not the
 * lease's: it is the change feed's checkpoint (ADR 0039), moved by compare-and-set, so that a reader that lost the
 * lease (paused, partitioned) cannot move it back or past what the new holder did. A lease that lapsed while its
 * holder could not reach Redis, and that nobody took meanwhile, is taken back by its holder's next renewal: a
 * reader that kept reading through a Redis outage goes on without a replay. Redis errors propagate.
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

	private final StringRedisTemplate redis;

	private final String leaderKey;

	private final Duration ttl;

	private final String token = UUID.randomUUID().toString();

	CaptureLease(StringRedisTemplate redis, String keyPrefix, Duration ttl) {
		this.redis = redis;
		this.leaderKey = "{" + keyPrefix + ":capture}:leader";
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

}
