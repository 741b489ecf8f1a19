package dev.concertcache.tiered.autoconfigure;

import java.time.Duration;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.TieredCacheMode;

/**
 * Configuration of the two-tier cache ({@code tiered-cache.*}). Every unset value keeps the default of the core
 * ({@link TieredCacheConfiguration}, {@link DefaultTieredCacheManager}); a cache's settings
 * ({@code tiered-cache.caches.<name>.*}) win over {@code tiered-cache.defaults.*}, field by field, as
 * resilience4j's {@code instances} win over its {@code configs}.
 *
 * @param mode Which tiers serve reads: NONE calls the loader every time (the baseline), REDIS uses Redis only,
 * TIERED uses Caffeine then Redis.
 * @param keyPrefix First segment of every Redis key and of the invalidation stream; change it to start over with
 * an empty L2 after an incompatible change of the cached types.
 * @param instanceId Identity of this instance in invalidation messages, so that it skips its own; by default a
 * random UUID per start.
 * @param defaults Settings of every cache, unless the cache sets its own.
 * @param caches Settings of single caches, by cache name, over the defaults.
 * @param invalidation Cross-instance invalidation through a Redis stream.
 * @param lock The per-key Redis lock that lets one instance load a cold key while the others wait for it.
 * @param circuitBreaker The circuit breaker around every Redis call ({@code tiered-cache-redis}).
 * @param loader What guards each cache's loader (the database) on a miss in every tier (ADR 0030).
 * @param hotSet The fleet's hot set: the keys each instance reads most, published to Redis, from which a starting
 * instance fills its L1 before it is ready (ADR 0202).
 * @author concert-cache
 */
@ConfigurationProperties("tiered-cache")
public record TieredCacheProperties(@DefaultValue("none") TieredCacheMode mode, @Nullable String keyPrefix,
		@Nullable String instanceId, @DefaultValue CacheSettings defaults, Map<String, CacheSettings> caches,
		@DefaultValue Invalidation invalidation, @DefaultValue Lock lock,
		@DefaultValue CircuitBreaker circuitBreaker, @DefaultValue Loader loader, @DefaultValue HotSet hotSet) {

	public TieredCacheProperties {
		caches = (caches != null) ? Map.copyOf(caches) : Map.of();
	}

	/**
	 * Settings of one cache, or of every cache; an unset one keeps the default.
	 *
	 * @param l1Ttl Time an entry stays in the in-process tier; shorter than l2-ttl (default 30s).
	 * @param l2Ttl Time an entry stays in Redis (default 10m).
	 * @param absentTtl Time an absent result (no such row) stays cached, in both tiers; at most l2-ttl (default 5s).
	 * @param l1MaximumSize Maximum number of entries in the in-process tier of one cache (default 10000).
	 * @param jitter Fraction by which every time to live is spread either way, so that entries written together
	 * do not expire together; between 0 and 0.5 (default 0.1).
	 * @param l1RefreshAhead Fraction of an in-process entry's time to live, at its end, in which a hit reads it again
	 * in the background while still answering from it, so that a key read that often never waits for Redis; the
	 * read follows every rule an expired entry's does; between 0 (off) and 0.5 (default 0.2).
	 * @param staleIfError Time an expired value may still be served, marked stale, while the loader fails (each tier
	 * keeps values this much longer); absent results are never served stale; 0 turns it off (default 5m).
	 */
	public record CacheSettings(@Nullable Duration l1Ttl, @Nullable Duration l2Ttl, @Nullable Duration absentTtl,
			@Nullable Long l1MaximumSize, @Nullable Double jitter, @Nullable Double l1RefreshAhead,
			@Nullable Duration staleIfError) {

		/** These settings, each unset one taken from {@code base}. */
		CacheSettings orElse(CacheSettings base) {
			return new CacheSettings(or(this.l1Ttl, base.l1Ttl), or(this.l2Ttl, base.l2Ttl),
					or(this.absentTtl, base.absentTtl), or(this.l1MaximumSize, base.l1MaximumSize),
					or(this.jitter, base.jitter), or(this.l1RefreshAhead, base.l1RefreshAhead),
					or(this.staleIfError, base.staleIfError));
		}

	}

	/**
	 * @param streamMaxLength Approximate number of messages the invalidation stream keeps; an instance that falls
	 * further behind flushes its whole L1 (default 10000).
	 * @param blockTimeout How long one blocking read of the stream waits for a message; each read that comes back
	 * proves the instance heard everything up to when it was sent, so keep it well below max-silence (default 250ms).
	 * @param maxSilence How long this instance may go without proof that it heard every invalidation before its L1
	 * stops serving entries read before then; keep it below the freshness promise minus the stream's delivery time
	 * (default 750ms).
	 * @param disconnectMaxAge How long after its read an L1 entry is served from a Redis connection's disconnect until
	 * a read of the stream sent after it comes back: the stream's node may be gone and other instances' writes
	 * unheard, so this is the staleness they can reach meanwhile (default 50ms).
	 * @param tombstoneTtl Time an eviction's tombstone stays in Redis; a load that started before an eviction and
	 * takes longer does not write to Redis (default 30s).
	 * @param pendingMaximumSize Evictions kept in memory while Redis cannot be reached; past it, every cache is
	 * evicted as a whole once Redis is back (default 10000).
	 * @param retryInterval Interval between attempts to send evictions that could not reach Redis (default 100ms):
	 * until one lands, other instances serve the old value.
	 */
	public record Invalidation(@Nullable Long streamMaxLength, @Nullable Duration blockTimeout,
			@Nullable Duration maxSilence, @Nullable Duration disconnectMaxAge, @Nullable Duration tombstoneTtl,
			@Nullable Integer pendingMaximumSize, @Nullable Duration retryInterval) {
	}

	/**
	 * @param ttl Time the lock is held at most, and the longest other instances wait for its holder before they
	 * load by themselves (default 2s).
	 * @param pollInterval Interval at which a waiting instance looks for the holder's value in Redis (default 20ms).
	 */
	public record Lock(@Nullable Duration ttl, @Nullable Duration pollInterval) {
	}

	/**
	 * A circuit breaker, the Redis one or the loaders' (the same keys as resilience4j's; unset ones keep the
	 * default of each: ADR 0014 and ADR 0030).
	 *
	 * @param enabled Whether calls go through the breaker; only the loader breaker can be turned off (then every
	 * miss waits for the loader's own timeouts).
	 * @param failureRateThreshold Percentage of failed calls in the sliding window that opens the breaker.
	 * @param slowCallDurationThreshold Duration above which a call counts as slow; for Redis keep it below
	 * spring.data.redis.timeout.
	 * @param slowCallRateThreshold Percentage of slow calls in the sliding window that opens the breaker.
	 * @param slidingWindowSize Number of most recent calls the rates are computed over.
	 * @param minimumNumberOfCalls Number of calls the window needs before the rates are computed.
	 * @param waitDurationInOpenState Time the breaker stays open before it lets trial calls through.
	 * @param permittedNumberOfCallsInHalfOpenState Number of trial calls in the half-open state.
	 */
	public record CircuitBreaker(@Nullable Boolean enabled, @Nullable Float failureRateThreshold,
			@Nullable Duration slowCallDurationThreshold, @Nullable Float slowCallRateThreshold,
			@Nullable Integer slidingWindowSize, @Nullable Integer minimumNumberOfCalls,
			@Nullable Duration waitDurationInOpenState, @Nullable Integer permittedNumberOfCallsInHalfOpenState) {
	}

	/**
	 * The loader guard of each cache ({@code tiered-cache-loader-<cache>}): these values are the default config;
	 * {@code resilience4j.circuitbreaker.instances.tiered-cache-loader-<cache>.*} and
	 * {@code resilience4j.bulkhead.instances.tiered-cache-loader-<cache>.*} win over them.
	 *
	 * @param bulkhead Bounds the loads in progress of one cache on this instance: hits never wait behind misses.
	 * @param circuitBreaker Fails a cache's misses at once while its loader is unavailable (only connection failures
	 * and timeouts count).
	 */
	public record Loader(@DefaultValue Bulkhead bulkhead, @DefaultValue CircuitBreaker circuitBreaker) {
	}

	/**
	 * @param maxConcurrentCalls Maximum number of loader calls of one cache in progress at once on this instance;
	 * keep the sum over the caches near the database connection pool size (default 16).
	 * @param maxWait Time a miss waits for a free slot before it fails or is served stale (default 50ms).
	 */
	public record Bulkhead(@Nullable Integer maxConcurrentCalls, @Nullable Duration maxWait) {
	}

	/**
	 * The fleet's hot set (see {@code HotSetConfiguration}); an unset value keeps the default.
	 *
	 * @param publishInterval Interval at which each instance publishes the keys of its L1's hottest entries per
	 * cache; the set expires after three intervals without a publish (default 30s).
	 * @param size Number of hottest keys per cache each instance publishes, the set keeps, and a starting instance
	 * fills at most; 0 turns the hot set off (default 1000).
	 * @param fillTimeout Longest the fill of a starting instance takes, every cache together; past it the instance
	 * is ready with what it filled (default 5s).
	 */
	public record HotSet(@Nullable Duration publishInterval, @Nullable Integer size, @Nullable Duration fillTimeout) {
	}

	private static <T> @Nullable T or(@Nullable T value, @Nullable T fallback) {
		return (value != null) ? value : fallback;
	}

}
