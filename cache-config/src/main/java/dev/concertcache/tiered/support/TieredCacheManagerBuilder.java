package dev.concertcache.tiered.support;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import com.github.benmanes.caffeine.cache.Ticker;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedBulkheadMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.TieredCacheMode;
import dev.concertcache.tiered.hotset.HotSetConfiguration;
import dev.concertcache.tiered.loader.LoaderReachability;

/**
 * Builds a {@link DefaultTieredCacheManager}; every setting but the connection factory has a default.
 */
public final class TieredCacheManagerBuilder {

	/** Default key prefix. */
	public static final String DEFAULT_KEY_PREFIX = "tiered-cache";

	/**
	 * Default Redis breaker: opens when half of the last 20 calls (10 at least) failed or 80 % took longer than
	 * 200 ms, stays open 2 s, then lets 3 trial calls through.
	 */
	public static final CircuitBreakerConfig DEFAULT_REDIS_CIRCUIT_BREAKER = CircuitBreakerConfig.custom()
		.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
		.slidingWindowSize(20)
		.minimumNumberOfCalls(10)
		.failureRateThreshold(50)
		.slowCallDurationThreshold(Duration.ofMillis(200))
		.slowCallRateThreshold(80)
		.waitDurationInOpenState(Duration.ofSeconds(2))
		.permittedNumberOfCallsInHalfOpenState(3)
		.automaticTransitionFromOpenToHalfOpenEnabled(true)
		.build();

	final RedisConnectionFactory connectionFactory;

	TieredCacheMode mode = TieredCacheMode.TIERED;

	String keyPrefix = DEFAULT_KEY_PREFIX;

	@Nullable String instanceId;

	TieredCacheConfiguration defaults = TieredCacheConfiguration.defaultConfig();

	final Map<String, TieredCacheConfiguration> configured = new LinkedHashMap<>();

	long streamMaxLength = 10_000;

	/** A read a few times per max-silence, one small command per instance when idle. */
	Duration blockTimeout = Duration.ofMillis(250);

	/** Within a freshness promise of one second, with a quarter of it left for delivery. */
	Duration maxSilence = Duration.ofMillis(750);

	/**
	 * Within the lag this service promises for its own writes (100 ms), with the stream's node gone: what another
	 * instance read just before a write is served at most this long after.
	 */
	Duration disconnectMaxAge = Duration.ofMillis(50);

	Duration tombstoneTtl = Duration.ofSeconds(30);

	int pendingMaximumSize = 10_000;

	Duration retryInterval = Duration.ofMillis(100);

	Duration lockTtl = Duration.ofSeconds(2);

	Duration lockPollInterval = Duration.ofMillis(20);

	CircuitBreakerConfig redisCircuitBreaker = DEFAULT_REDIS_CIRCUIT_BREAKER;

	@Nullable MeterRegistry meterRegistry;

	@Nullable CircuitBreakerRegistry circuitBreakerRegistry;

	@Nullable BulkheadRegistry bulkheadRegistry;

	@Nullable Ticker ticker;

	@Nullable Clock clock;

	@Nullable Ticker watermarkTicker;

	@Nullable Duration changeFeedMaxLag;

	HotSetConfiguration hotSet = HotSetConfiguration.defaultConfig();

	@Nullable Executor refresher;

	LoaderReachability loaderReachability = new LoaderReachability();

	TieredCacheManagerBuilder(RedisConnectionFactory connectionFactory) {
		Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
		this.connectionFactory = connectionFactory;
	}

	/** Which tiers serve reads: REDIS or TIERED (the default). */
	public TieredCacheManagerBuilder mode(TieredCacheMode mode) {
		this.mode = mode;
		return this;
	}

	/** The first segment of every Redis key; a new one starts over with an empty L2 (the cached types changed). */
	public TieredCacheManagerBuilder keyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
		return this;
	}

	/** This instance's identity in invalidation messages; by default a random UUID per start. */
	public TieredCacheManagerBuilder instanceId(String instanceId) {
		this.instanceId = instanceId;
		return this;
	}

	/** The configuration of every cache that has none of its own. */
	public TieredCacheManagerBuilder cacheDefaults(TieredCacheConfiguration defaults) {
		this.defaults = defaults;
		return this;
	}

	/** The configuration of every cache that has none of its own, so far. */
	public TieredCacheConfiguration cacheDefaults() {
		return this.defaults;
	}

	/** The configuration of cache {@code name}. */
	public TieredCacheManagerBuilder withCacheConfiguration(String name, TieredCacheConfiguration configuration) {
		this.configured.put(name, configuration);
		return this;
	}

	/** Approximate number of messages the invalidation stream keeps; an instance further behind flushes L1. */
	public TieredCacheManagerBuilder streamMaxLength(long streamMaxLength) {
		this.streamMaxLength = streamMaxLength;
		return this;
	}

	/** How long one blocking read of the invalidation stream waits; keep it well below max-silence. */
	public TieredCacheManagerBuilder blockTimeout(Duration blockTimeout) {
		this.blockTimeout = blockTimeout;
		return this;
	}

	/** How long this instance may be unsure it heard every invalidation before L1 stops serving older entries. */
	public TieredCacheManagerBuilder maxSilence(Duration maxSilence) {
		this.maxSilence = maxSilence;
		return this;
	}

	/** How old an L1 entry may be to be served from a disconnect until a read of the stream comes back. */
	public TieredCacheManagerBuilder disconnectMaxAge(Duration disconnectMaxAge) {
		this.disconnectMaxAge = disconnectMaxAge;
		return this;
	}

	/** Follows a change feed: past {@code maxLag} since its last confirmation, reads go to the loader (ADR 0039). */
	public TieredCacheManagerBuilder changeFeedMaxLag(Duration maxLag) {
		this.changeFeedMaxLag = maxLag;
		return this;
	}

	/** Time an eviction's tombstone stays in Redis. */
	public TieredCacheManagerBuilder tombstoneTtl(Duration tombstoneTtl) {
		this.tombstoneTtl = tombstoneTtl;
		return this;
	}

	/** Evictions kept in memory while Redis cannot be reached; past it every cache is evicted as a whole. */
	public TieredCacheManagerBuilder pendingMaximumSize(int pendingMaximumSize) {
		this.pendingMaximumSize = pendingMaximumSize;
		return this;
	}

	/**
	 * Runs the L1 refresh-ahead reads ({@link TieredCacheConfiguration#l1RefreshAhead()}) instead of the manager's
	 * own two daemon threads; it may reject a task when busy.
	 */
	public TieredCacheManagerBuilder refresher(Executor refresher) {
		this.refresher = refresher;
		return this;
	}

	/** Shared by every cache's loader guard; pass the one the binary-log reader also tells. */
	public TieredCacheManagerBuilder loaderReachability(LoaderReachability loaderReachability) {
		this.loaderReachability = loaderReachability;
		return this;
	}

	/** Interval between attempts to send evictions that could not reach Redis. */
	public TieredCacheManagerBuilder retryInterval(Duration retryInterval) {
		this.retryInterval = retryInterval;
		return this;
	}

	/** Time the per-key load lock is held at most, and the longest other instances wait for its holder. */
	public TieredCacheManagerBuilder lockTtl(Duration lockTtl) {
		this.lockTtl = lockTtl;
		return this;
	}

	/** Interval at which a waiting instance looks for the lock holder's value in Redis. */
	public TieredCacheManagerBuilder lockPollInterval(Duration lockPollInterval) {
		this.lockPollInterval = lockPollInterval;
		return this;
	}

	/** The {@value DefaultTieredCacheManager#CIRCUIT_BREAKER_NAME} breaker around every Redis call. */
	public TieredCacheManagerBuilder redisCircuitBreaker(CircuitBreakerConfig redisCircuitBreaker) {
		this.redisCircuitBreaker = redisCircuitBreaker;
		return this;
	}

	/** Where the cache's meters go; by default a private {@link SimpleMeterRegistry}. */
	public TieredCacheManagerBuilder meterRegistry(MeterRegistry meterRegistry) {
		this.meterRegistry = meterRegistry;
		return this;
	}

	/** Where the Redis and loader breakers are created; by default a private one, bound to the meter registry. */
	public TieredCacheManagerBuilder circuitBreakerRegistry(CircuitBreakerRegistry circuitBreakerRegistry) {
		this.circuitBreakerRegistry = circuitBreakerRegistry;
		return this;
	}

	/** Where the loader bulkheads are created; by default a private one, bound to the meter registry. */
	public TieredCacheManagerBuilder bulkheadRegistry(BulkheadRegistry bulkheadRegistry) {
		this.bulkheadRegistry = bulkheadRegistry;
		return this;
	}

	/** The time source of L1 expiry; by default the system ticker. Tests pass a fake one. */
	public TieredCacheManagerBuilder ticker(Ticker ticker) {
		this.ticker = ticker;
		return this;
	}

	/** The wall clock of invalidation send times and lag; by default UTC system time. */
	public TieredCacheManagerBuilder clock(Clock clock) {
		this.clock = clock;
		return this;
	}

	/**
	 * The time source of {@code tiered-cache.invalidation.max-silence} (how long ago invalidations were last
	 * heard); by default the system ticker. Tests pass a fake one.
	 */
	public TieredCacheManagerBuilder watermarkTicker(Ticker watermarkTicker) {
		this.watermarkTicker = watermarkTicker;
		return this;
	}

	/**
	 * The hot set: how often this instance publishes its hottest keys, how many, and how long a fill before
	 * readiness may take (see {@link HotSetConfiguration}).
	 */
	public TieredCacheManagerBuilder hotSet(HotSetConfiguration hotSet) {
		this.hotSet = hotSet;
		return this;
	}

	public DefaultTieredCacheManager build() {
		return new DefaultTieredCacheManager(this);
	}

	/** The application's registry if it has one, else a private one bound to the meter registry. */
	CircuitBreakerRegistry circuitBreakerRegistry() {
		if (this.circuitBreakerRegistry != null) {
			return this.circuitBreakerRegistry;
		}
		CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
		if (this.meterRegistry != null) {
			TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(registry).bindTo(this.meterRegistry);
		}
		return registry;
	}

	/** The application's registry if it has one, else a private one bound to the meter registry. */
	BulkheadRegistry bulkheadRegistry() {
		if (this.bulkheadRegistry != null) {
			return this.bulkheadRegistry;
		}
		BulkheadRegistry registry = BulkheadRegistry.ofDefaults();
		if (this.meterRegistry != null) {
			TaggedBulkheadMetrics.ofBulkheadRegistry(registry).bindTo(this.meterRegistry);
		}
		return registry;
	}

}

