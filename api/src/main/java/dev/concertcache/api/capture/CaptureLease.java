package dev.concertcache.api.capture;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Redis lease that makes one instance the fleet's reader of the binary log, and the position it has
 * processed. The position is written only by the lease's holder, checked in the same script, so that an instance
 * that lost the lease (paused, partitioned) cannot move the position back or past what the new holder did.
 * Redis errors propagate: the caller stops streaming and retries.
 */
class CaptureLease {

	private static final RedisScript<Long> RENEW = RedisScript.of("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
				return redis.call('pexpire', KEYS[1], ARGV[2])
			end
			return 0""", Long.class);

	private static final RedisScript<Long> RELEASE = RedisScript.of("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
				return redis.call('del', KEYS[1])
			end
			return 0""", Long.class);

	private static final RedisScript<Long> SAVE_POSITION = RedisScript.of("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
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

	/** Takes the lease if nobody holds it; true if this instance holds it now (taken or already held). */
	boolean acquire() {
		if (renew()) {
			return true;
		}
		return Boolean.TRUE.equals(this.redis.opsForValue().setIfAbsent(this.leaderKey, this.token, this.ttl));
	}

	/** Extends the lease if this instance holds it; false if it does not (expired, taken by another). */
	boolean renew() {
		Long renewed = this.redis.execute(RENEW, List.of(this.leaderKey), this.token,
				String.valueOf(this.ttl.toMillis()));
		return renewed != null && renewed == 1;
	}

	/** Gives the lease up, if held, so that a standby takes over without waiting for the TTL. */
	void release() {
		this.redis.execute(RELEASE, List.of(this.leaderKey), this.token);
	}

	/** Whether another instance holds the lease. */
	boolean heldByAnother() {
		String holder = this.redis.opsForValue().get(this.leaderKey);
		return holder != null && !holder.equals(this.token);
	}

	/** The stored position, or {@code null} if there is none (first start, or Redis lost it). */
	BinlogPosition position() {
		return BinlogPosition.parse(this.redis.opsForValue().get(this.positionKey));
	}

	/** Stores {@code position} if this instance holds the lease; false if it does not. */
	boolean savePosition(BinlogPosition position) {
		Long saved = this.redis.execute(SAVE_POSITION, List.of(this.leaderKey, this.positionKey), this.token,
				position.format());
		return saved != null && saved == 1;
	}

}
