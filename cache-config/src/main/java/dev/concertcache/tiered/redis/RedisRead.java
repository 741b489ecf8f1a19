package dev.concertcache.tiered.redis;

import java.util.Optional;

import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.format.StoredDigest;

/**
 * What a read of one key found in Redis (ADR 0011): a fresh value, a miss to load (and maybe store), or no Redis
 * to use at all.
 *
 * @param <V> the value type
 */
public sealed interface RedisRead<V> {

	@SuppressWarnings("unchecked")
	public static <V> RedisRead<V> unavailable() {
		return (RedisRead<V>) Unavailable.INSTANCE;
	}

	/**
	 * A fresh value (or a fresh "absent").
	 * @param digest the digest of the bytes it was read from, {@code null} if unknown
	 * @param readAgo how long before this read (ms) it was read from the database, {@link #UNKNOWN_AGE} if unknown
	 */
	public record Hit<V>(Optional<V> value, @Nullable StoredDigest digest, long readAgo) implements RedisRead<V> {

		/** The age of a value that carries no database read time, or that was read without the server's time. */
		public static final long UNKNOWN_AGE = -1;

		public Hit(Optional<V> value, @Nullable StoredDigest digest) {
			this(value, digest, UNKNOWN_AGE);
		}
	}

	/**
	 * A miss: the value the loader returns may be stored under {@code valueKey} if the key still holds {@code seen}
	 * then (an eviction during the load wins).
	 * @param seen what the key held before the load ({@code ""} for nothing, a tombstone, a stale or unreadable
	 * value)
	 * @param token the load lock's token if this reader holds it, {@code null} if it loads without it
	 * @param readAt the Redis server's time (epoch ms) before the load, which the stored value carries as when it
	 * was read from the database; {@link dev.concertcache.tiered.format.JsonValueCodec#UNKNOWN_READ} if unknown
	 */
	public record Load<V>(String valueKey, String lockKey, String seen, @Nullable String token, long readAt)
			implements RedisRead<V> {
	}

	/**
	 * Redis is down or slow, or still holds what this instance's own pending eviction replaced: load without it,
	 * store nothing.
	 */
	public enum Unavailable implements RedisRead<Object> {

		INSTANCE

	}

}
