package dev.concertcache.tiered.support;

import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.ToLongFunction;

import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.format.JsonValueCodec;
import dev.concertcache.tiered.format.JsonValueCodec.Stored;
import dev.concertcache.tiered.format.StoredDigest;
import dev.concertcache.tiered.gate.InvalidationWatermark;
import dev.concertcache.tiered.local.L1Entry;
import dev.concertcache.tiered.redis.RedisRead;

/**
 * What a cache serves when its loader is unavailable (ADR 0031): the value Redis still keeps past its freshness
 * (it is at least as new as this instance's copy), else the stale L1 entry, each only within its stale-if-error
 * window. Nothing from L1 while Redis holds a tombstone for the key: an eviction landed after the entry was read,
 * and its announcement is on its way to this instance.
 *
 * @param <V> the value type
 */
final class StaleIfError<V> {

	private final TieredCacheConfiguration spec;

	private final Ticker ticker;

	private final Clock clock;

	private final Function<String, @Nullable Stored<V>> decoder;

	StaleIfError(TieredCacheConfiguration spec, Ticker ticker, Clock clock,
			Function<String, @Nullable Stored<V>> decoder) {
		this.spec = spec;
		this.ticker = ticker;
		this.clock = clock;
		this.decoder = decoder;
	}

	/**
	 * The entry to serve after a failed load, {@code null} if there is none or the cache serves nothing stale.
	 * @param staleInL1 the L1 entry past its freshness that the load was to refresh, if any
	 */
	@Nullable L1Entry<V> fallback(RedisRead<V> read, @Nullable L1Entry<V> staleInL1) {
		if (!this.spec.servesStale()) {
			return null;
		}
		long now = this.ticker.read();
		if (isTombstoned(read)) {
			return null;
		}
		L1Entry<V> inRedis = fromRedis(read, staleInL1, now,
				(stored) -> (stored.freshUntil() != JsonValueCodec.ALWAYS_FRESH)
						? stored.freshUntil() + this.spec.l2StaleMillis(false) - this.clock.millis() : 0);
		if (inRedis != null) {
			return inRedis;
		}
		if (staleInL1 != null && staleInL1.value.isPresent() && now - staleInL1.staleUntil < 0) {
			return staleInL1.servedStale(now);
		}
		return null;
	}

	/**
	 * What a failed load may serve while the database cannot be reached when the freshness gate refused it but its
	 * time to live has not run out, whatever the cache's stale-if-error window: the value a cache without the gate
	 * would serve as a hit, marked stale (ADR 0031, ADR 0039). Present values only.
	 * @param inL1 the L1 entry the gate refused, if any
	 */
	@Nullable L1Entry<V> withinTimeToLive(RedisRead<V> read, @Nullable L1Entry<V> inL1) {
		long now = this.ticker.read();
		if (isTombstoned(read)) {
			return null;
		}
		if (inL1 != null && inL1.value.isPresent() && inL1.isFreshAt(now)) {
			// Fresh until now: the next read asks the gate, then the database, again.
			return new L1Entry<>(inL1.value, now, now, inL1.freshUntil, true, Source.L1, inL1.readAt,
					inL1.databaseReadAt, inL1.digest);
		}
		return fromRedis(read, inL1, now, (stored) -> stored.freshUntil() - this.clock.millis());
	}

	/**
	 * The present value a load found in Redis, served stale for the milliseconds {@code millisLeft} gives it, if
	 * positive; else {@code null}.
	 */
	private @Nullable L1Entry<V> fromRedis(RedisRead<V> read, @Nullable L1Entry<V> inL1, long now,
			ToLongFunction<RedisCopy<V>> millisLeft) {
		if (!(read instanceof RedisRead.Load<V> load) || load.seen().isEmpty()) {
			return null;
		}
		RedisCopy<V> stored = redisCopy(load.seen(), inL1);
		if (stored == null || stored.value().isEmpty()) {
			return null;
		}
		long left = millisLeft.applyAsLong(stored);
		if (left <= 0) {
			return null;
		}
		// Fresh until now: the next read tries the loader again.
		return new L1Entry<>(stored.value(), now, now, now + TimeUnit.MILLISECONDS.toNanos(left), true, Source.L2,
				InvalidationWatermark.NEVER, InvalidationWatermark.NEVER, stored.digest());
	}

	/**
	 * The value Redis holds as {@code raw}: the L1 entry's own instance if it was read from or stored as the same bytes
	 * (what the application made of it stays valid, and nothing is decoded), else decoded.
	 */
	private @Nullable RedisCopy<V> redisCopy(String raw, @Nullable L1Entry<V> inL1) {
		StoredDigest digest = StoredDigest.of(raw);
		long freshUntil = JsonValueCodec.freshUntilPrefix(raw);
		if (inL1 != null && digest.equals(inL1.digest) && freshUntil >= 0) {
			return new RedisCopy<>(inL1.value, freshUntil, digest);
		}
		Stored<V> stored = this.decoder.apply(raw);
		return (stored != null) ? new RedisCopy<>(stored.value(), stored.freshUntil(), digest) : null;
	}

	private record RedisCopy<V>(Optional<V> value, long freshUntil, StoredDigest digest) {
	}

	private static boolean isTombstoned(RedisRead<?> read) {
		return read instanceof RedisRead.Load<?> load && JsonValueCodec.isTombstone(load.seen());
	}

}
