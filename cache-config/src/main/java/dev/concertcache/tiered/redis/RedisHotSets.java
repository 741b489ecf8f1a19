package dev.concertcache.tiered.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The caches' hot sets in Redis (ADR 0202): per cache, a sorted set of the keys the fleet reads most, which a
 * starting instance fills its L1 from. Through the Redis breaker, as every call of the data path.
 */
public final class RedisHotSets {

	/**
	 * Adds one instance's hottest keys (ARGV[3..]: score, key pairs) to a cache's hot set, keeps the ARGV[1] with
	 * the highest scores (the most recently published, hottest first) and expires the set ARGV[2] ms after the last
	 * publish: a set bounded in keys and in time whatever the number of instances.
	 */
	private static final RedisScript<Long> PUBLISH_HOT = RedisScript.of("""
			for i = 3, #ARGV, 2 do redis.call('ZADD', KEYS[1], 'GT', ARGV[i], ARGV[i + 1]) end
			redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[1]) + 1))
			redis.call('PEXPIRE', KEYS[1], ARGV[2])
			return redis.call('ZCARD', KEYS[1])
			""", Long.class);

	private final StringRedisTemplate redis;

	private final RedisCalls calls;

	private final String namespace;

	public RedisHotSets(StringRedisTemplate redis, RedisCalls calls, String namespace) {
		this.redis = redis;
		this.calls = calls;
		this.namespace = namespace;
	}

	/**
	 * {@code {<prefix>:v1:<cache>:hot}}: the cache's hot set, a sorted set of encoded keys (not of Redis keys: they
	 * outlive generations and shapes), its whole name its tag as for the counters.
	 */
	public String hotSetKey(String cache) {
		return "{" + this.namespace + cache + ":hot}";
	}

	/**
	 * Publishes {@code hottest} (encoded keys, hottest first) into {@code cache}'s hot set, scored by {@code now}
	 * (epoch ms) less their rank, so that the newest publishes win and each keeps its order.
	 * @return how many keys the set holds
	 */
	public long publishHot(String cache, List<String> hottest, int size, long ttlMillis, long now) {
		List<String> args = new ArrayList<>(2 + 2 * hottest.size());
		args.add(String.valueOf(size));
		args.add(String.valueOf(ttlMillis));
		for (int rank = 0; rank < hottest.size(); rank++) {
			args.add(String.valueOf(now - rank));
			args.add(hottest.get(rank));
		}
		Long held = this.calls.withBreaker(cache, "hot-set", () -> this.redis.execute(PUBLISH_HOT, List.of(hotSetKey(cache)),
				args.toArray()));
		return (held != null) ? held : 0;
	}

	/** The hottest {@code max} keys (encoded) of {@code cache}'s hot set, hottest first. */
	public List<String> hotKeys(String cache, int max) {
		Set<String> keys = this.calls.withBreaker(cache, "hot-set",
				() -> this.redis.opsForZSet().reverseRange(hotSetKey(cache), 0, max - 1));
		return (keys != null) ? List.copyOf(keys) : List.of();
	}

}
