package dev.concertcache.tiered.redis;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The value shapes each cache uses, registered in Redis ({@code <prefix>:v1:<cache>:shapes}, a sorted set scored by
 * how long a value of each may live) before a load may store one, so that an eviction tombstones the key under
 * every shape in use (ADR 0012). This instance remembers what it registered and for how long, so that a miss costs
 * no registration while one holds.
 */
public final class ShapeRegistrations {

	/** Registers a shape until ARGV[1] (epoch ms), never shortening a registration (GT still adds new ones). */
	private static final RedisScript<Long> REGISTER_SHAPE = RedisScript.of(
			"return redis.call('ZADD', KEYS[1], 'GT', ARGV[1], ARGV[2])", Long.class);

	/**
	 * How much longer than asked a shape is registered: the next loads of the shape then skip the registration
	 * (one command per shape per cache every few minutes, not one per miss). A longer registration only makes
	 * evictions tombstone that shape's key a while longer.
	 */
	private static final long SHAPE_REGISTRATION_SLACK_MILLIS = TimeUnit.MINUTES.toMillis(5);

	private final StringRedisTemplate redis;

	private final RedisCalls calls;

	private final Function<String, String> shapesKey;

	/** Until when (epoch ms) this instance registered each {@code <cache> <shape>}, as far as it knows. */
	private final ConcurrentMap<String, Long> registered = new ConcurrentHashMap<>();

	public ShapeRegistrations(StringRedisTemplate redis, RedisCalls calls, Function<String, String> shapesKey) {
		this.redis = redis;
		this.calls = calls;
		this.shapesKey = shapesKey;
	}

	/**
	 * Registers {@code shape} as in use by {@code cache} until at least {@code until} (epoch ms), unless this
	 * instance registered it that long already.
	 */
	public void register(String cache, String shape, long until) {
		String registration = cache + " " + shape;
		Long known = this.registered.get(registration);
		if (known != null && known >= until) {
			return;
		}
		long registeredUntil = until + SHAPE_REGISTRATION_SLACK_MILLIS;
		this.calls.withBreaker(cache, "lock", () -> this.redis.execute(REGISTER_SHAPE, List.of(this.shapesKey.apply(cache)),
				String.valueOf(registeredUntil), shape));
		this.registered.merge(registration, registeredUntil, Math::max);
	}

	/** Forgets every registration: Redis may have lost them. */
	public void forget() {
		this.registered.clear();
	}

}
