package dev.concertcache.tiered.log;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import dev.concertcache.tiered.metrics.TieredCacheMetrics;
import dev.concertcache.tiered.redis.RedisCalls;
import dev.concertcache.tiered.redis.RedisTier;

/**
 * The invalidation stream and the keys in its slot (ADR 0039, "Key layout"). Every message is appended past the
 * Redis breaker: an invalidation Redis can still take must land now.
 */
public final class InvalidationStream {

	/**
	 * Numbers an invalidation message and appends it to the stream (the counter shares the stream's slot); with a
	 * seventh argument, its {@value #SCOPE} field.
	 */
	private static final RedisScript<Long> ANNOUNCE = RedisScript.of("""
			local seq = redis.call('INCR', KEYS[2])
			local fields = {'cache', ARGV[2], 'key', ARGV[3], 'gen', ARGV[4], 'seq', seq, 'origin', ARGV[5],
			  'sent', ARGV[6]}
			if ARGV[7] then
			  table.insert(fields, 'scope')
			  table.insert(fields, ARGV[7])
			end
			redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(fields))
			return seq
			""", Long.class);

	/**
	 * Appends a change feed's confirmation ({@value #FEED_LAG}, {@value #FEED_POSITION}, ADR 0039) if the feed's
	 * checkpoint (KEYS[3]) is still ARGV[5]. Returns 1, or 0 if the checkpoint moved.
	 */
	private static final RedisScript<Long> ANNOUNCE_FEED = RedisScript.of("""
			if (redis.call('GET', KEYS[3]) or '') ~= ARGV[5] then return 0 end
			local seq = redis.call('INCR', KEYS[2])
			redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'seq', seq, 'origin', ARGV[2], 'sent', ARGV[3],
			  'feed-lag', ARGV[4], 'position', ARGV[5])
			return 1
			""", Long.class);

	/**
	 * Moves the change feed's checkpoint (KEYS[1]) from ARGV[1] ({@code ''} for none) to ARGV[2]; returns 1, or 0 if
	 * it was not ARGV[1].
	 */
	private static final RedisScript<Long> MOVE_FEED_CHECKPOINT = RedisScript.of("""
			if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
			redis.call('SET', KEYS[1], ARGV[2])
			return 1
			""", Long.class);

	/** The field of a change feed's confirmation (ADR 0039); messages without it are invalidations. */
	public static final String FEED_LAG = "feed-lag";

	/** The field of a change feed's confirmation that names the feed's position it covers (ADR 0038). */
	public static final String FEED_POSITION = "position";

	/**
	 * The field of an invalidation message that narrows what it makes stale; without it, everything its key names in
	 * both tiers. Instances of a version that does not know it clear L1 as for any evict-all: more than needed,
	 * never less.
	 */
	public static final String SCOPE = "scope";

	/** {@value #SCOPE} of a generation move that makes stale what Redis holds, not L1 (a failover, ADR 0039). */
	public static final String REDIS_ONLY = "redis";

	/**
	 * The generation an invalidation message names for an eviction that did not land in Redis: every generation is
	 * a clock reading (ms), so no real one is negative.
	 */
	public static final long NOT_LANDED = -1;

	private final StringRedisTemplate redis;

	private final RedisCalls calls;

	private final String name;

	private final String sequence;

	/** The change feed's checkpoint, in the stream's slot (ADR 0039). */
	private final String feedCheckpoint;

	private final long maxLength;

	public InvalidationStream(StringRedisTemplate redis, RedisCalls calls, String name, long maxLength) {
		this.redis = redis;
		this.calls = calls;
		this.name = name;
		this.sequence = sequenceKey(name);
		this.feedCheckpoint = "{" + name + "}:feed";
		this.maxLength = maxLength;
	}

	/**
	 * The stream of {@code tier}'s key prefix. Not under the format version: instances of every version in a rolling
	 * deploy hear each other.
	 */
	public static InvalidationStream of(RedisTier tier, long maxLength) {
		return new InvalidationStream(tier.template(), tier.calls(), tier.keyPrefix() + ":invalidations", maxLength);
	}

	/** The key of the counter that numbers the messages of {@code stream}: tagged to hash to the stream's slot. */
	public static String sequenceKey(String stream) {
		return "{" + stream + "}:seq";
	}

	/** The stream's key. */
	public String name() {
		return this.name;
	}

	/**
	 * Appends a change feed's confirmation to the stream if the feed's checkpoint is {@code checkpoint}, past the
	 * breaker as announcements are; returns whether it did.
	 */
	public boolean announceChangeFeed(String origin, long sentAt, long lagNanos, @Nullable String checkpoint) {
		return accepted(this.calls.pastTheBreaker(TieredCacheMetrics.ALL_CACHES, "feed", () -> this.redis.execute(
				ANNOUNCE_FEED, List.of(this.name, this.sequence, this.feedCheckpoint),
				String.valueOf(this.maxLength), origin, String.valueOf(sentAt), String.valueOf(lagNanos),
				(checkpoint != null) ? checkpoint : "")));
	}

	/** Moves the change feed's checkpoint from {@code previous} ({@code null}: none) to {@code checkpoint}. */
	public boolean moveChangeFeedCheckpoint(@Nullable String previous, String checkpoint) {
		return accepted(this.calls.pastTheBreaker(TieredCacheMetrics.ALL_CACHES, "feed", () -> this.redis.execute(
				MOVE_FEED_CHECKPOINT, List.of(this.feedCheckpoint), (previous != null) ? previous : "", checkpoint)));
	}

	/** The change feed's checkpoint the stream's node holds, {@code null} if none. */
	public @Nullable String changeFeedCheckpoint() {
		return this.calls.pastTheBreaker(TieredCacheMetrics.ALL_CACHES, "feed",
				() -> this.redis.opsForValue().get(this.feedCheckpoint));
	}

	private static boolean accepted(@Nullable Long outcome) {
		return outcome != null && outcome == 1;
	}

	public void announce(String cache, String key, long generation, String origin, long sentAt) {
		announce(cache, key, generation, origin, sentAt, null);
	}

	public void announce(String cache, String key, long generation, String origin, long sentAt,
			@Nullable String scope) {
		List<String> arguments = new ArrayList<>(List.of(String.valueOf(this.maxLength), cache, key,
				String.valueOf(generation), origin, String.valueOf(sentAt)));
		if (scope != null) {
			arguments.add(scope);
		}
		this.calls.pastTheBreaker(cache, "evict", () -> this.redis.execute(ANNOUNCE,
				List.of(this.name, this.sequence), arguments.toArray()));
	}

}
