package dev.concertcache.tiered;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the two-tier cache: the mode, the defaults of every cache and their per-cache overrides
 * ({@code tiered-cache.caches.<name>.*}), and the Redis-side settings of invalidation, locking and failure
 * handling.
 *
 * @author concert-cache
 */
@ConfigurationProperties("tiered-cache")
public class TieredCacheProperties {

	/** Default L1 (Caffeine) time to live. */
	public static final Duration DEFAULT_L1_TTL = Duration.ofSeconds(30);

	/** Default L2 (Redis) time to live. */
	public static final Duration DEFAULT_L2_TTL = Duration.ofMinutes(10);

	/** Default time to live of an absent result, in both tiers. */
	public static final Duration DEFAULT_ABSENT_TTL = Duration.ofSeconds(5);

	/** Default maximum number of L1 entries per cache. */
	public static final long DEFAULT_L1_MAXIMUM_SIZE = 10_000;

	/** Default jitter: every TTL is spread by up to this fraction either way. */
	public static final double DEFAULT_JITTER = 0.1;

	/**
	 * Default time an expired value may still be served, marked stale, while the loader fails (RFC 5861's
	 * stale-if-error). Zero turns it off.
	 */
	public static final Duration DEFAULT_STALE_IF_ERROR = Duration.ofMinutes(5);

	/** Default maximum number of loader calls in progress at once on one instance. */
	public static final int DEFAULT_LOADER_MAX_CONCURRENT_CALLS = 16;

	/** Default time a miss waits for one of the loader permits before it fails. */
	public static final Duration DEFAULT_LOADER_MAX_WAIT = Duration.ofMillis(50);

	/** Default time the loader's circuit breaker stays open before it lets trial loads through. */
	public static final Duration DEFAULT_LOADER_WAIT_DURATION_IN_OPEN_STATE = Duration.ofSeconds(1);

	/**
	 * Which tiers serve reads: NONE calls the loader every time (the baseline), REDIS uses Redis only,
	 * TIERED uses Caffeine then Redis.
	 */
	private Mode mode = Mode.NONE;

	/**
	 * First segment of every Redis key and of the invalidation stream. Change it to start over with an empty
	 * L2 after an incompatible change of the cached types.
	 */
	private String keyPrefix = "tiered-cache";

	/**
	 * Identity of this instance in invalidation messages, so that it skips its own. By default a random UUID
	 * per start.
	 */
	private String instanceId;

	/**
	 * Settings of every cache that has no override.
	 */
	private final CacheDefaults defaults = new CacheDefaults();

	/**
	 * Per-cache overrides of the defaults, by cache name.
	 */
	private final Map<String, CacheOverrides> caches = new LinkedHashMap<>();

	private final Invalidation invalidation = new Invalidation();

	private final Lock lock = new Lock();

	private final CircuitBreaker circuitBreaker = new CircuitBreaker();

	private final Loader loader = new Loader();

	public Mode getMode() {
		return this.mode;
	}

	public void setMode(Mode mode) {
		this.mode = mode;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public String getInstanceId() {
		return this.instanceId;
	}

	public void setInstanceId(String instanceId) {
		this.instanceId = instanceId;
	}

	public CacheDefaults getDefaults() {
		return this.defaults;
	}

	public Map<String, CacheOverrides> getCaches() {
		return this.caches;
	}

	public Invalidation getInvalidation() {
		return this.invalidation;
	}

	public Lock getLock() {
		return this.lock;
	}

	public CircuitBreaker getCircuitBreaker() {
		return this.circuitBreaker;
	}

	public Loader getLoader() {
		return this.loader;
	}

	/** Which tiers serve reads. */
	public enum Mode {

		/** No caching: every read calls the loader. */
		NONE,

		/** Redis only, no in-process tier. */
		REDIS,

		/** Caffeine in process, then Redis. */
		TIERED

	}

	/**
	 * Settings of a cache that has no override.
	 */
	public static class CacheDefaults {

		/**
		 * Time an entry stays in the in-process tier. Must be shorter than l2-ttl.
		 */
		private Duration l1Ttl = DEFAULT_L1_TTL;

		/**
		 * Time an entry stays in Redis.
		 */
		private Duration l2Ttl = DEFAULT_L2_TTL;

		/**
		 * Time an absent result (no such row) stays cached, in both tiers. At most l2-ttl.
		 */
		private Duration absentTtl = DEFAULT_ABSENT_TTL;

		/**
		 * Maximum number of entries in the in-process tier of one cache.
		 */
		private long l1MaximumSize = DEFAULT_L1_MAXIMUM_SIZE;

		/**
		 * Fraction by which every time to live is spread either way, so that entries written together do not
		 * expire together. Between 0 and 0.5.
		 */
		private double jitter = DEFAULT_JITTER;

		/**
		 * Time an expired value may still be served, marked stale, when the loader fails (in both tiers: each
		 * keeps values this much longer than its time to live). Absent results are never served stale. Zero
		 * turns it off.
		 */
		private Duration staleIfError = DEFAULT_STALE_IF_ERROR;

		public Duration getL1Ttl() {
			return this.l1Ttl;
		}

		public void setL1Ttl(Duration l1Ttl) {
			this.l1Ttl = l1Ttl;
		}

		public Duration getL2Ttl() {
			return this.l2Ttl;
		}

		public void setL2Ttl(Duration l2Ttl) {
			this.l2Ttl = l2Ttl;
		}

		public Duration getAbsentTtl() {
			return this.absentTtl;
		}

		public void setAbsentTtl(Duration absentTtl) {
			this.absentTtl = absentTtl;
		}

		public long getL1MaximumSize() {
			return this.l1MaximumSize;
		}

		public void setL1MaximumSize(long l1MaximumSize) {
			this.l1MaximumSize = l1MaximumSize;
		}

		public double getJitter() {
			return this.jitter;
		}

		public void setJitter(double jitter) {
			this.jitter = jitter;
		}

		public Duration getStaleIfError() {
			return this.staleIfError;
		}

		public void setStaleIfError(Duration staleIfError) {
			this.staleIfError = staleIfError;
		}

	}

	/**
	 * Overrides of the defaults for one cache; an unset field keeps the default.
	 */
	public static class CacheOverrides {

		/**
		 * Time an entry stays in the in-process tier. Must be shorter than l2-ttl.
		 */
		private Duration l1Ttl;

		/**
		 * Time an entry stays in Redis.
		 */
		private Duration l2Ttl;

		/**
		 * Time an absent result (no such row) stays cached, in both tiers. At most l2-ttl.
		 */
		private Duration absentTtl;

		/**
		 * Maximum number of entries in the in-process tier of this cache.
		 */
		private Long l1MaximumSize;

		/**
		 * Fraction by which every time to live is spread either way. Between 0 and 0.5.
		 */
		private Double jitter;

		/**
		 * Time an expired value may still be served, marked stale, when the loader fails. Zero turns it off
		 * for this cache.
		 */
		private Duration staleIfError;

		public Duration getL1Ttl() {
			return this.l1Ttl;
		}

		public void setL1Ttl(Duration l1Ttl) {
			this.l1Ttl = l1Ttl;
		}

		public Duration getL2Ttl() {
			return this.l2Ttl;
		}

		public void setL2Ttl(Duration l2Ttl) {
			this.l2Ttl = l2Ttl;
		}

		public Duration getAbsentTtl() {
			return this.absentTtl;
		}

		public void setAbsentTtl(Duration absentTtl) {
			this.absentTtl = absentTtl;
		}

		public Long getL1MaximumSize() {
			return this.l1MaximumSize;
		}

		public void setL1MaximumSize(Long l1MaximumSize) {
			this.l1MaximumSize = l1MaximumSize;
		}

		public Double getJitter() {
			return this.jitter;
		}

		public void setJitter(Double jitter) {
			this.jitter = jitter;
		}

		public Duration getStaleIfError() {
			return this.staleIfError;
		}

		public void setStaleIfError(Duration staleIfError) {
			this.staleIfError = staleIfError;
		}

	}

	/**
	 * Cross-instance invalidation through a Redis stream.
	 */
	public static class Invalidation {

		/** A read a few times per {@link #DEFAULT_MAX_SILENCE}, one small command per instance when idle. */
		static final Duration DEFAULT_BLOCK_TIMEOUT = Duration.ofMillis(250);

		/** Within a freshness promise of one second, with a quarter of it left for delivery. */
		static final Duration DEFAULT_MAX_SILENCE = Duration.ofMillis(750);

		/**
		 * Approximate number of messages the invalidation stream keeps. An instance that falls further behind
		 * than this flushes its whole L1.
		 */
		private long streamMaxLength = 10_000;

		/**
		 * How long one blocking read of the stream waits for a message before it is issued again. Each read that
		 * comes back proves the instance has heard everything up to when it was sent: keep it well below
		 * max-silence.
		 */
		private Duration blockTimeout = DEFAULT_BLOCK_TIMEOUT;

		/**
		 * How long this instance may go without proof that it has heard every invalidation before its L1 stops
		 * serving entries read before then (they are read again through Redis or the loader). Bounds what an
		 * instance that cannot hear the stream (Redis down, its connection killed) serves stale; keep it below the
		 * freshness promise minus the stream's delivery time.
		 */
		private Duration maxSilence = DEFAULT_MAX_SILENCE;

		/**
		 * Time an eviction's tombstone stays in Redis. A load that started before an eviction and takes longer
		 * than this does not write to Redis.
		 */
		private Duration tombstoneTtl = Duration.ofSeconds(30);

		/**
		 * Maximum number of evictions kept in memory while Redis cannot be reached. Past it, every cache is
		 * evicted as a whole once Redis is back.
		 */
		private int pendingMaximumSize = 10_000;

		/**
		 * Interval between attempts to send evictions that could not reach Redis. Short: until one lands, other
		 * instances serve the old value; a pass with nothing pending costs nothing.
		 */
		private Duration retryInterval = Duration.ofMillis(100);

		public long getStreamMaxLength() {
			return this.streamMaxLength;
		}

		public void setStreamMaxLength(long streamMaxLength) {
			this.streamMaxLength = streamMaxLength;
		}

		public Duration getBlockTimeout() {
			return this.blockTimeout;
		}

		public void setBlockTimeout(Duration blockTimeout) {
			this.blockTimeout = blockTimeout;
		}

		public Duration getMaxSilence() {
			return this.maxSilence;
		}

		public void setMaxSilence(Duration maxSilence) {
			this.maxSilence = maxSilence;
		}

		public Duration getTombstoneTtl() {
			return this.tombstoneTtl;
		}

		public void setTombstoneTtl(Duration tombstoneTtl) {
			this.tombstoneTtl = tombstoneTtl;
		}

		public int getPendingMaximumSize() {
			return this.pendingMaximumSize;
		}

		public void setPendingMaximumSize(int pendingMaximumSize) {
			this.pendingMaximumSize = pendingMaximumSize;
		}

		public Duration getRetryInterval() {
			return this.retryInterval;
		}

		public void setRetryInterval(Duration retryInterval) {
			this.retryInterval = retryInterval;
		}

	}

	/**
	 * The per-key Redis lock that lets one instance load a cold key while the others wait for it.
	 */
	public static class Lock {

		/**
		 * Time the lock is held at most, and the longest other instances wait for the holder before they load
		 * by themselves.
		 */
		private Duration ttl = Duration.ofSeconds(2);

		/**
		 * Interval at which a waiting instance looks for the holder's value in Redis.
		 */
		private Duration pollInterval = Duration.ofMillis(20);

		public Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(Duration ttl) {
			this.ttl = ttl;
		}

		public Duration getPollInterval() {
			return this.pollInterval;
		}

		public void setPollInterval(Duration pollInterval) {
			this.pollInterval = pollInterval;
		}

	}

	/**
	 * The circuit breaker around every Redis call ({@code tiered-cache-redis}).
	 */
	public static class CircuitBreaker {

		/**
		 * Percentage of failed calls in the sliding window that opens the breaker.
		 */
		private float failureRateThreshold = 50;

		/**
		 * Duration above which a Redis call counts as slow. Keep it below spring.data.redis.timeout.
		 */
		private Duration slowCallDurationThreshold = Duration.ofMillis(200);

		/**
		 * Percentage of slow calls in the sliding window that opens the breaker.
		 */
		private float slowCallRateThreshold = 80;

		/**
		 * Number of most recent calls the failure and slow-call rates are computed over.
		 */
		private int slidingWindowSize = 20;

		/**
		 * Number of calls the window needs before the rates are computed.
		 */
		private int minimumNumberOfCalls = 10;

		/**
		 * Time the breaker stays open (Redis skipped) before it lets trial calls through.
		 */
		private Duration waitDurationInOpenState = Duration.ofSeconds(2);

		/**
		 * Number of trial calls in the half-open state.
		 */
		private int permittedNumberOfCallsInHalfOpenState = 3;

		public float getFailureRateThreshold() {
			return this.failureRateThreshold;
		}

		public void setFailureRateThreshold(float failureRateThreshold) {
			this.failureRateThreshold = failureRateThreshold;
		}

		public Duration getSlowCallDurationThreshold() {
			return this.slowCallDurationThreshold;
		}

		public void setSlowCallDurationThreshold(Duration slowCallDurationThreshold) {
			this.slowCallDurationThreshold = slowCallDurationThreshold;
		}

		public float getSlowCallRateThreshold() {
			return this.slowCallRateThreshold;
		}

		public void setSlowCallRateThreshold(float slowCallRateThreshold) {
			this.slowCallRateThreshold = slowCallRateThreshold;
		}

		public int getSlidingWindowSize() {
			return this.slidingWindowSize;
		}

		public void setSlidingWindowSize(int slidingWindowSize) {
			this.slidingWindowSize = slidingWindowSize;
		}

		public int getMinimumNumberOfCalls() {
			return this.minimumNumberOfCalls;
		}

		public void setMinimumNumberOfCalls(int minimumNumberOfCalls) {
			this.minimumNumberOfCalls = minimumNumberOfCalls;
		}

		public Duration getWaitDurationInOpenState() {
			return this.waitDurationInOpenState;
		}

		public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
			this.waitDurationInOpenState = waitDurationInOpenState;
		}

		public int getPermittedNumberOfCallsInHalfOpenState() {
			return this.permittedNumberOfCallsInHalfOpenState;
		}

		public void setPermittedNumberOfCallsInHalfOpenState(int permittedNumberOfCallsInHalfOpenState) {
			this.permittedNumberOfCallsInHalfOpenState = permittedNumberOfCallsInHalfOpenState;
		}

	}

	/**
	 * What guards the loader (the database) on a miss in every tier: a bulkhead that bounds the loads in progress
	 * on this instance, and a circuit breaker that fails misses at once while the loader is unavailable.
	 */
	public static class Loader {

		private final Bulkhead bulkhead = new Bulkhead();

		private final LoaderCircuitBreaker circuitBreaker = new LoaderCircuitBreaker();

		public Bulkhead getBulkhead() {
			return this.bulkhead;
		}

		public LoaderCircuitBreaker getCircuitBreaker() {
			return this.circuitBreaker;
		}

	}

	/**
	 * The bulkhead ({@code tiered-cache-loader}) around every loader call: hits never wait behind misses.
	 */
	public static class Bulkhead {

		/**
		 * Maximum number of loader calls in progress at once on this instance, across all caches. Keep it near
		 * the database connection pool size.
		 */
		private int maxConcurrentCalls = DEFAULT_LOADER_MAX_CONCURRENT_CALLS;

		/**
		 * Time a miss waits for a free slot before it fails (or is served stale).
		 */
		private Duration maxWait = DEFAULT_LOADER_MAX_WAIT;

		public int getMaxConcurrentCalls() {
			return this.maxConcurrentCalls;
		}

		public void setMaxConcurrentCalls(int maxConcurrentCalls) {
			this.maxConcurrentCalls = maxConcurrentCalls;
		}

		public Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(Duration maxWait) {
			this.maxWait = maxWait;
		}

	}

	/**
	 * The circuit breaker ({@code tiered-cache-loader}) around every loader call. Only failures that say the
	 * loader is unavailable count (connection failures, timeouts: see {@link LoaderFailures}); while it is open,
	 * misses fail at once and expired values are served stale.
	 */
	public static class LoaderCircuitBreaker {

		/**
		 * Whether loader calls go through the circuit breaker. Without it every miss waits for the loader's own
		 * timeouts.
		 */
		private boolean enabled = true;

		/**
		 * Percentage of failed calls in the sliding window that opens the breaker.
		 */
		private float failureRateThreshold = 50;

		/**
		 * Number of most recent loader calls the failure rate is computed over.
		 */
		private int slidingWindowSize = 20;

		/**
		 * Number of calls the window needs before the rate is computed.
		 */
		private int minimumNumberOfCalls = 10;

		/**
		 * Time the breaker stays open (misses fail at once) before it lets trial loads through.
		 */
		private Duration waitDurationInOpenState = DEFAULT_LOADER_WAIT_DURATION_IN_OPEN_STATE;

		/**
		 * Number of trial loads in the half-open state.
		 */
		private int permittedNumberOfCallsInHalfOpenState = 3;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public float getFailureRateThreshold() {
			return this.failureRateThreshold;
		}

		public void setFailureRateThreshold(float failureRateThreshold) {
			this.failureRateThreshold = failureRateThreshold;
		}

		public int getSlidingWindowSize() {
			return this.slidingWindowSize;
		}

		public void setSlidingWindowSize(int slidingWindowSize) {
			this.slidingWindowSize = slidingWindowSize;
		}

		public int getMinimumNumberOfCalls() {
			return this.minimumNumberOfCalls;
		}

		public void setMinimumNumberOfCalls(int minimumNumberOfCalls) {
			this.minimumNumberOfCalls = minimumNumberOfCalls;
		}

		public Duration getWaitDurationInOpenState() {
			return this.waitDurationInOpenState;
		}

		public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
			this.waitDurationInOpenState = waitDurationInOpenState;
		}

		public int getPermittedNumberOfCallsInHalfOpenState() {
			return this.permittedNumberOfCallsInHalfOpenState;
		}

		public void setPermittedNumberOfCallsInHalfOpenState(int permittedNumberOfCallsInHalfOpenState) {
			this.permittedNumberOfCallsInHalfOpenState = permittedNumberOfCallsInHalfOpenState;
		}

	}

}
