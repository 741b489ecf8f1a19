package dev.concertcache.tiered;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import com.github.benmanes.caffeine.cache.Ticker;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedBulkheadMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.Assert;

import dev.concertcache.tiered.PendingEvictions.Eviction;
import dev.concertcache.tiered.TieredCacheProperties.Mode;

/**
 * The {@link TieredCacheManager} of modes {@link Mode#TIERED TIERED} (Caffeine, then Redis) and
 * {@link Mode#REDIS REDIS} (Redis only). Build one with {@link #builder}; the auto-configuration does.
 * <p>
 * As a {@link SmartLifecycle} it starts the invalidation listener (a daemon thread reading the Redis stream on
 * its own connection) and the retry of evictions that could not reach Redis, and stops both on shutdown.
 *
 * @author concert-cache
 */
public final class DefaultTieredCacheManager implements TieredCacheManager, SmartLifecycle {

	/** The name of the circuit breaker around every Redis call, as its metrics show it. */
	public static final String CIRCUIT_BREAKER_NAME = "tiered-cache-redis";

	/** The name of the circuit breaker and of the bulkhead around every loader call, as their metrics show it. */
	public static final String LOADER_GUARD_NAME = "tiered-cache-loader";

	private static final Log logger = LogFactory.getLog(DefaultTieredCacheManager.class);

	private static final Pattern CACHE_NAME = Pattern.compile("[A-Za-z0-9._-]+");

	/** The warm-up the current thread is in, if any (of any manager: {@link #warmupTwin} checks whose). */
	private static final ThreadLocal<Warmup> currentWarmup = new ThreadLocal<>();

	private final Mode mode;

	private final CacheSpec defaults;

	private final Map<String, CacheSpec> configured;

	private final RedisConnectionFactory connectionFactory;

	private final RedisTier redis;

	private final PendingEvictions pending;

	private final LoaderGuard loaderGuard;

	private final TieredCacheMetrics metrics;

	private final Ticker ticker;

	private final Clock clock;

	private final JsonMapper jsonMapper;

	private final String instanceId;

	private final Duration lockTtl;

	private final Duration lockPollInterval;

	private final Duration tombstoneTtl;

	private final Duration retryInterval;

	private final Duration blockTimeout;

	private final InvalidationWatermark watermark;

	private final ConcurrentMap<String, DefaultTieredCache<?, ?>> caches = new ConcurrentHashMap<>();

	private final AtomicReference<Warmup> warmup = new AtomicReference<>();

	private volatile InvalidationListener listener;

	private volatile ScheduledExecutorService retries;

	private volatile boolean running;

	private DefaultTieredCacheManager(Builder builder) {
		TieredCacheProperties properties = builder.properties;
		this.mode = properties.getMode();
		Assert.state(this.mode != Mode.NONE, "Mode NONE needs no cache manager: every read calls the loader");
		this.defaults = CacheSpec.of(properties.getDefaults()).validate("tiered-cache.defaults");
		Map<String, CacheSpec> configured = new LinkedHashMap<>();
		properties.getCaches().forEach((name, overrides) -> {
			requireValidName(name);
			configured.put(name, this.defaults.with(overrides).validate("tiered-cache.caches." + name));
		});
		this.configured = Map.copyOf(configured);
		this.connectionFactory = builder.connectionFactory;
		this.metrics = new TieredCacheMetrics(
				(builder.meterRegistry != null) ? builder.meterRegistry : new SimpleMeterRegistry());
		this.ticker = (builder.ticker != null) ? builder.ticker : Ticker.systemTicker();
		this.clock = (builder.clock != null) ? builder.clock : Clock.systemUTC();
		this.jsonMapper = (builder.jsonMapper != null) ? builder.jsonMapper : JsonValueCodec.defaultMapper();
		this.instanceId = (properties.getInstanceId() != null) ? properties.getInstanceId()
				: UUID.randomUUID().toString();
		this.lockTtl = properties.getLock().getTtl();
		this.lockPollInterval = properties.getLock().getPollInterval();
		this.tombstoneTtl = properties.getInvalidation().getTombstoneTtl();
		this.retryInterval = properties.getInvalidation().getRetryInterval();
		this.blockTimeout = properties.getInvalidation().getBlockTimeout();
		this.watermark = new InvalidationWatermark(
				(builder.watermarkTicker != null) ? builder.watermarkTicker : Ticker.systemTicker(),
				properties.getInvalidation().getMaxSilence());
		StringRedisTemplate template = new StringRedisTemplate(builder.connectionFactory);
		CircuitBreakerRegistry breakers = circuitBreakerRegistry(builder);
		this.redis = new RedisTier(template, redisCircuitBreaker(breakers, properties.getCircuitBreaker()),
				this.metrics, properties.getKeyPrefix(), properties.getInvalidation().getStreamMaxLength());
		this.loaderGuard = new LoaderGuard(bulkheadRegistry(builder), breakers, LOADER_GUARD_NAME,
				properties.getLoader());
		this.pending = new PendingEvictions(properties.getInvalidation().getPendingMaximumSize());
		this.metrics.pendingEvictions(this.pending::size);
	}

	/**
	 * Starts building a manager over {@code connectionFactory} with {@code properties} (mode REDIS or TIERED).
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory, TieredCacheProperties properties) {
		return new Builder(connectionFactory, properties);
	}

	/**
	 * {@inheritDoc}
	 * @throws IllegalArgumentException if the name holds other characters than letters, digits, '.', '_' and
	 * '-', if keys of {@code keyType} have no stable text form, or if the cache exists with other types
	 */
	@Override
	@SuppressWarnings("unchecked")
	public <K, V> TieredCache<K, V> getCache(String name, Class<K> keyType, Class<V> valueType) {
		requireValidName(name);
		DefaultTieredCache<?, ?> cache = this.caches.computeIfAbsent(name,
				(key) -> new DefaultTieredCache<>(key, keyType, valueType, spec(key), this));
		if (cache.keyType() != keyType || cache.valueType() != valueType) {
			throw new IllegalArgumentException("Cache '" + name + "' exists with keys of " + cache.keyType().getName()
					+ " and values of " + cache.valueType().getName() + ", not " + keyType.getName() + " and "
					+ valueType.getName());
		}
		return (TieredCache<K, V>) cache;
	}

	@Override
	public TieredCacheWarmup openWarmup() {
		Warmup opened = new Warmup();
		Assert.state(this.warmup.compareAndSet(null, opened), "A warm-up is open already");
		return opened;
	}

	/** The twin of {@code cache} in the warm-up the calling thread is in, or null outside an open one of ours. */
	@SuppressWarnings("unchecked")
	<K, V> DefaultTieredCache<K, V> warmupTwin(DefaultTieredCache<K, V> cache) {
		Warmup current = currentWarmup.get();
		if (current == null || current != this.warmup.get()) {
			return null;
		}
		return (DefaultTieredCache<K, V>) current.twins.computeIfAbsent(cache.name(),
				(name) -> cache.twin(current.redis, current.metrics));
	}

	/** The names of the caches created so far. */
	public Set<String> getCacheNames() {
		return Set.copyOf(this.caches.keySet());
	}

	/** Evicts every cache created so far, on every instance (one generation bump each). */
	public void evictAllCaches() {
		this.caches.values().forEach(DefaultTieredCache::evictAll);
	}

	/**
	 * The {@value #LOADER_GUARD_NAME} circuit breaker, unless {@code tiered-cache.loader.circuit-breaker.enabled}
	 * is false: its state says whether the loader (the database) is considered available, and its events let an
	 * application react to the change (for example, to stop its connection pool from backing off while the
	 * database is down).
	 */
	public Optional<CircuitBreaker> getLoaderCircuitBreaker() {
		return Optional.ofNullable(this.loaderGuard.breaker());
	}

	/** The mode this manager serves. */
	public Mode getMode() {
		return this.mode;
	}

	/** This instance's identity in invalidation messages. */
	public String getInstanceId() {
		return this.instanceId;
	}

	@Override
	public void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		if (this.connectionFactory instanceof LettuceConnectionFactory lettuce
				&& lettuce.getRequiredNativeClient() instanceof RedisClient client) {
			this.listener = new InvalidationListener(client, this.redis.stream(), this.blockTimeout,
					"tiered-cache-invalidations-" + this.instanceId, this::onMessage, this::flush, this.metrics,
					this.watermark);
			this.listener.start();
		}
		else {
			logger.warn("Cross-instance invalidation needs a standalone Lettuce connection factory; other "
					+ "instances' writes reach this instance's L1 only through its TTL");
		}
		ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "tiered-cache-retry");
			thread.setDaemon(true);
			return thread;
		});
		long interval = this.retryInterval.toMillis();
		retries.scheduleWithFixedDelay(this::retryPending, interval, interval, TimeUnit.MILLISECONDS);
		this.retries = retries;
	}

	@Override
	public void stop() {
		this.running = false;
		InvalidationListener listener = this.listener;
		if (listener != null) {
			listener.stop();
		}
		ScheduledExecutorService retries = this.retries;
		if (retries != null) {
			retries.shutdownNow();
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/** After the Redis connection factory (phase 0), before the web server: the cache is ready for requests. */
	@Override
	public int getPhase() {
		return Integer.MAX_VALUE - 4096;
	}

	Mode mode() {
		return this.mode;
	}

	RedisTier redis() {
		return this.redis;
	}

	PendingEvictions pending() {
		return this.pending;
	}

	TieredCacheMetrics metrics() {
		return this.metrics;
	}

	LoaderGuard loaderGuard() {
		return this.loaderGuard;
	}

	CircuitBreaker circuitBreaker() {
		return this.redis.breaker();
	}

	Ticker ticker() {
		return this.ticker;
	}

	Clock clock() {
		return this.clock;
	}

	JsonMapper jsonMapper() {
		return this.jsonMapper;
	}

	String instanceId() {
		return this.instanceId;
	}

	Duration lockTtl() {
		return this.lockTtl;
	}

	Duration lockPollInterval() {
		return this.lockPollInterval;
	}

	Duration tombstoneTtl() {
		return this.tombstoneTtl;
	}

	InvalidationWatermark watermark() {
		return this.watermark;
	}

	/**
	 * Whether this instance hears other instances' invalidations: its listener is connected and its thread alive.
	 * While it does not, L1 serves nothing older than {@code tiered-cache.invalidation.max-silence}.
	 */
	public boolean isListening() {
		InvalidationListener listener = this.listener;
		return listener != null && listener.isConnected();
	}

	/** The listener of the invalidation stream, {@code null} before start; for tests. */
	InvalidationListener listener() {
		return this.listener;
	}

	/** How long ago this instance last heard every invalidation, or {@code null} if it never has. */
	public Duration getInvalidationSilence() {
		return this.watermark.silence();
	}

	CacheSpec spec(String name) {
		return this.configured.getOrDefault(name, this.defaults);
	}

	void onMessage(Map<String, String> message) {
		String cacheName = message.get("cache");
		String key = message.get("key");
		long generation = Long.parseLong(message.getOrDefault("gen", "0"));
		DefaultTieredCache<?, ?> cache = (cacheName != null) ? this.caches.get(cacheName) : null;
		if (this.instanceId.equals(message.get("origin"))) {
			if (cache != null && PendingEvictions.ALL.equals(key)) {
				cache.advanceGeneration(generation);
			}
			return;
		}
		String sent = message.get("sent");
		if (sent != null) {
			this.metrics.lag(this.clock.millis() - Long.parseLong(sent));
		}
		if (cache != null && key != null) {
			cache.onInvalidation(key, generation);
		}
	}

	void flush(String reason) {
		logger.info("Flushing L1 of every cache: " + reason);
		this.caches.values().forEach(DefaultTieredCache::flush);
	}

	void retryPending() {
		try {
			// Not gated by the Redis breaker, as evictions are not: the first one Redis does not take ends the pass.
			if (this.pending.isEmpty()) {
				return;
			}
			if (this.pending.overflowed()) {
				this.pending.overflowDone();
				for (DefaultTieredCache<?, ?> cache : this.caches.values()) {
					if (!cache.evictAllNow()) {
						return;
					}
				}
			}
			for (Map.Entry<Eviction, Long> request : this.pending.snapshot()) {
				Eviction eviction = request.getKey();
				DefaultTieredCache<?, ?> cache = this.caches.get(eviction.cache());
				if (cache == null) {
					this.pending.done(eviction, request.getValue());
					continue;
				}
				// Runs the whole eviction again, L1 included: a read between Redis' return and this replay
				// may have put the old L2 value back into this instance's L1. Forgotten only once Redis took it:
				// until then this instance's reads of the key do not use Redis.
				boolean taken = PendingEvictions.ALL.equals(eviction.key()) ? cache.evictAllNow()
						: cache.evictNow(eviction.key());
				if (!taken) {
					return;
				}
				this.pending.done(eviction, request.getValue());
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Retry of pending evictions failed", ex);
		}
	}

	/** The application's registry if it has one, else a private one bound to the meter registry. */
	private static CircuitBreakerRegistry circuitBreakerRegistry(Builder builder) {
		if (builder.circuitBreakerRegistry != null) {
			return builder.circuitBreakerRegistry;
		}
		CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
		if (builder.meterRegistry != null) {
			TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(registry).bindTo(builder.meterRegistry);
		}
		return registry;
	}

	/** The application's registry if it has one, else a private one bound to the meter registry. */
	private static BulkheadRegistry bulkheadRegistry(Builder builder) {
		if (builder.bulkheadRegistry != null) {
			return builder.bulkheadRegistry;
		}
		BulkheadRegistry registry = BulkheadRegistry.ofDefaults();
		if (builder.meterRegistry != null) {
			TaggedBulkheadMetrics.ofBulkheadRegistry(registry).bindTo(builder.meterRegistry);
		}
		return registry;
	}

	private static CircuitBreaker redisCircuitBreaker(CircuitBreakerRegistry registry,
			TieredCacheProperties.CircuitBreaker properties) {
		CircuitBreakerConfig config = CircuitBreakerConfig.custom()
			.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.slidingWindowSize(properties.getSlidingWindowSize())
			.minimumNumberOfCalls(properties.getMinimumNumberOfCalls())
			.failureRateThreshold(properties.getFailureRateThreshold())
			.slowCallDurationThreshold(properties.getSlowCallDurationThreshold())
			.slowCallRateThreshold(properties.getSlowCallRateThreshold())
			.waitDurationInOpenState(properties.getWaitDurationInOpenState())
			.permittedNumberOfCallsInHalfOpenState(properties.getPermittedNumberOfCallsInHalfOpenState())
			.automaticTransitionFromOpenToHalfOpenEnabled(true)
			.build();
		return registry.circuitBreaker(CIRCUIT_BREAKER_NAME, config);
	}

	private static void requireValidName(String name) {
		if (name == null || !CACHE_NAME.matcher(name).matches()) {
			throw new IllegalArgumentException("Cache name '" + name
					+ "' must consist of letters, digits, '.', '_' and '-' (it is a segment of every Redis key)");
		}
	}

	/**
	 * Builds a {@link DefaultTieredCacheManager}; every setting but the connection factory and the properties
	 * has a default.
	 */
	/**
	 * Twins of the caches over keys of their own ({@code <key-prefix>:warmup:<instance-id>:}) and meters nobody
	 * scrapes; they share the Redis connection, both circuit breakers and the loader guard with the real caches,
	 * so a warm-up runs exactly the code a real read runs.
	 */
	private final class Warmup implements TieredCacheWarmup {

		private final TieredCacheMetrics metrics = new TieredCacheMetrics(new SimpleMeterRegistry());

		private final RedisTier redis = DefaultTieredCacheManager.this.redis
			.child("warmup:" + DefaultTieredCacheManager.this.instanceId, this.metrics);

		private final ConcurrentMap<String, DefaultTieredCache<?, ?>> twins = new ConcurrentHashMap<>();

		@Override
		public Scope enter() {
			Warmup outer = currentWarmup.get();
			currentWarmup.set(this);
			return () -> {
				if (outer != null) {
					currentWarmup.set(outer);
				}
				else {
					currentWarmup.remove();
				}
			};
		}

		@Override
		public void close() {
			if (!DefaultTieredCacheManager.this.warmup.compareAndSet(this, null)) {
				return;
			}
			this.twins.clear();
			try {
				long deleted = this.redis.deleteAll();
				logger.debug("Warm-up over; deleted its " + deleted + " Redis keys");
			}
			catch (RuntimeException ex) {
				logger.warn("Warm-up over, but its Redis keys could not be deleted; they expire by their TTL", ex);
			}
		}

	}

	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private final TieredCacheProperties properties;

		private MeterRegistry meterRegistry;

		private CircuitBreakerRegistry circuitBreakerRegistry;

		private BulkheadRegistry bulkheadRegistry;

		private Ticker ticker;

		private Clock clock;

		private JsonMapper jsonMapper;

		private Ticker watermarkTicker;

		private Builder(RedisConnectionFactory connectionFactory, TieredCacheProperties properties) {
			Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
			Assert.notNull(properties, "'properties' must not be null");
			this.connectionFactory = connectionFactory;
			this.properties = properties;
		}

		/** Where the cache's meters go; by default a private {@link SimpleMeterRegistry}. */
		public Builder meterRegistry(MeterRegistry meterRegistry) {
			this.meterRegistry = meterRegistry;
			return this;
		}

		/**
		 * The registry the {@value #CIRCUIT_BREAKER_NAME} and {@value #LOADER_GUARD_NAME} breakers are created
		 * in; by default a private one, bound to the meter registry.
		 */
		public Builder circuitBreakerRegistry(CircuitBreakerRegistry circuitBreakerRegistry) {
			this.circuitBreakerRegistry = circuitBreakerRegistry;
			return this;
		}

		/**
		 * The registry the {@value #LOADER_GUARD_NAME} bulkhead is created in; by default a private one, bound to
		 * the meter registry.
		 */
		public Builder bulkheadRegistry(BulkheadRegistry bulkheadRegistry) {
			this.bulkheadRegistry = bulkheadRegistry;
			return this;
		}

		/** The time source of L1 expiry; by default the system ticker. Tests pass a fake one. */
		public Builder ticker(Ticker ticker) {
			this.ticker = ticker;
			return this;
		}

		/** The wall clock of invalidation send times and lag; by default UTC system time. */
		public Builder clock(Clock clock) {
			this.clock = clock;
			return this;
		}

		/**
		 * The mapper of values to JSON; by default one that ignores unknown properties. It decides the stored
		 * format: change it only together with the key prefix.
		 */
		public Builder jsonMapper(JsonMapper jsonMapper) {
			this.jsonMapper = jsonMapper;
			return this;
		}

		/**
		 * The time source of {@code tiered-cache.invalidation.max-silence} (how long ago invalidations were last
		 * heard); by default the system ticker. Tests pass a fake one.
		 */
		public Builder watermarkTicker(Ticker watermarkTicker) {
			this.watermarkTicker = watermarkTicker;
			return this;
		}

		public DefaultTieredCacheManager build() {
			return new DefaultTieredCacheManager(this);
		}

	}

}
