package dev.concertcache.tiered;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;

import com.github.benmanes.caffeine.cache.Ticker;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedBulkheadMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.Assert;

import dev.concertcache.tiered.PendingEvictions.Eviction;
import dev.concertcache.tiered.RedisTier.UnavailableException;

/**
 * The {@link TieredCacheManager} of modes {@link TieredCacheMode#TIERED TIERED} (Caffeine, then Redis) and
 * {@link TieredCacheMode#REDIS REDIS} (Redis only). Build one with {@link #builder}; the auto-configuration does.
 * <p>
 * As a {@link SmartLifecycle} it starts the invalidation listener (a daemon thread reading the Redis stream on
 * its own connection), the retry of evictions that could not reach Redis and (mode TIERED) the publishing of the
 * hot set, and stops them on shutdown.
 *
 * @author concert-cache
 */
public final class DefaultTieredCacheManager implements TieredCacheManager, SmartLifecycle {

	/** The name of the circuit breaker around every Redis call, as its metrics show it. */
	public static final String CIRCUIT_BREAKER_NAME = "tiered-cache-redis";

	/**
	 * The prefix of the names of each cache's loader circuit breaker and bulkhead ({@code tiered-cache-loader-<cache>}),
	 * as their metrics and {@code resilience4j.*.instances} show them.
	 */
	public static final String LOADER_GUARD_NAME = "tiered-cache-loader";


	/**
	 * Threads of the default refresh-ahead executor: a refresh is mostly one Redis read; two, so that one waiting
	 * for a slow loader does not hold the others back.
	 */
	static final int REFRESH_THREADS = 2;


	/** Refreshes queued at most; past it a hit starts none and the entry expires as it would without. */
	static final int REFRESH_QUEUE_CAPACITY = 1024;

	private static final Log logger = LogFactory.getLog(DefaultTieredCacheManager.class);

	private static final Pattern CACHE_NAME = Pattern.compile("[A-Za-z0-9._-]+");

	private final TieredCacheMode mode;

	private final TieredCacheConfiguration defaults;

	private final Map<String, TieredCacheConfiguration> configured;

	private final RedisConnectionFactory connectionFactory;

	private final RedisTier redis;

	private final PendingEvictions pending;

	private final BulkheadRegistry bulkheads;

	private final CircuitBreakerRegistry breakers;

	private final ConcurrentMap<String, LoaderGuard> loaderGuards = new ConcurrentHashMap<>();

	private final TieredCacheMetrics metrics;

	private final Ticker ticker;

	private final Clock clock;

	private final JsonMapper jsonMapper;

	private final String instanceId;

	private final Duration blockTimeout;

	private final InvalidationWatermark watermark;

	/** How far the external change feed, if one is followed, has invalidated both tiers (ADR 0037). */
	private final ChangeFeedWatermark feed;

	/** Whether the standalone server is the one generations were read from, after any connection dropped. */
	private final ServerConfirmation server = new ServerConfirmation();

	private final RedisLoadProtocol.Settings redisSettings;

	private final ConcurrentMap<String, Registered<?, ?>> caches = new ConcurrentHashMap<>();

	private final Warmups warmups;

	private volatile @Nullable InvalidationListener listener;

	private final FailoverGenerations failovers;

	private final PendingEvictionRetry retry;

	private final HotSetExchange hotSet;

	private volatile boolean running;

	/** Runs L1 refresh-ahead reads ({@link LocalTier}); shut down with the manager when it made it. */
	private final Executor refresher;

	private final @Nullable ExecutorService ownRefresher;

	DefaultTieredCacheManager(TieredCacheManagerBuilder builder) {
		this.mode = builder.mode;
		Assert.state(this.mode != TieredCacheMode.NONE, "Mode NONE needs no cache manager: every read calls the loader");
		this.defaults = builder.defaults.validate("tiered-cache.defaults");
		Map<String, TieredCacheConfiguration> configured = new LinkedHashMap<>();
		builder.configured.forEach((name, configuration) -> {
			requireValidName(name);
			configured.put(name, configuration.validate("tiered-cache.caches." + name));
		});
		this.configured = Map.copyOf(configured);
		this.connectionFactory = builder.connectionFactory;
		this.metrics = new TieredCacheMetrics(
				(builder.meterRegistry != null) ? builder.meterRegistry : new SimpleMeterRegistry());
		this.ticker = (builder.ticker != null) ? builder.ticker : Ticker.systemTicker();
		this.clock = (builder.clock != null) ? builder.clock : Clock.systemUTC();
		this.jsonMapper = (builder.jsonMapper != null) ? builder.jsonMapper : JsonValueCodec.defaultMapper();
		this.instanceId = (builder.instanceId != null) ? builder.instanceId : UUID.randomUUID().toString();
		this.blockTimeout = builder.blockTimeout;
		this.ownRefresher = (builder.refresher != null) ? null : refresher();
		this.refresher = (builder.refresher != null) ? builder.refresher : this.ownRefresher;
		this.watermark = new InvalidationWatermark(
				(builder.watermarkTicker != null) ? builder.watermarkTicker : Ticker.systemTicker(),
				builder.maxSilence);
		this.feed = (builder.changeFeedMaxLag != null)
				? ChangeFeedWatermark.of((builder.watermarkTicker != null) ? builder.watermarkTicker
						: Ticker.systemTicker(), builder.changeFeedMaxLag)
				: ChangeFeedWatermark.NONE;
		StringRedisTemplate template = new StringRedisTemplate(builder.connectionFactory);
		this.breakers = circuitBreakerRegistry(builder);
		this.bulkheads = bulkheadRegistry(builder);
		this.redis = new RedisTier(template, this.breakers.circuitBreaker(CIRCUIT_BREAKER_NAME, builder.redisCircuitBreaker),
				this.metrics, builder.keyPrefix, builder.streamMaxLength, this::onMoved);
		this.pending = new PendingEvictions(builder.pendingMaximumSize);
		this.metrics.pendingEvictions(this.pending::size);
		this.warmups = new Warmups(this.redis, this.instanceId);
		this.hotSet = new HotSetExchange(this.mode, builder.hotSet.validate("tiered-cache.hot-set"), this::cores,
				this.redis, this.metrics, this.clock);
		this.failovers = new FailoverGenerations(this::cores, this.redis, this.pending, this.feed, this.server,
				() -> this.listener, this.instanceId, this.clock);
		this.retry = new PendingEvictionRetry(this.pending, this::cores, this::coreOrNull, this.failovers,
				builder.retryInterval);
		this.redisSettings = new RedisLoadProtocol.Settings(this.ticker, this.clock, this.pending, this.server,
				this.instanceId, builder.lockTtl, builder.lockPollInterval, builder.tombstoneTtl, builder.maxSilence);
	}

	/** Starts building a manager over {@code connectionFactory}, in mode TIERED unless told otherwise. */
	public static TieredCacheManagerBuilder builder(RedisConnectionFactory connectionFactory) {
		return new TieredCacheManagerBuilder(connectionFactory);
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
		Registered<?, ?> cache = this.caches.computeIfAbsent(name, (key) -> register(key, keyType, valueType));
		if (cache.core().keyType() != keyType || cache.core().valueType() != valueType) {
			throw new IllegalArgumentException("Cache '" + name + "' exists with keys of "
					+ cache.core().keyType().getName() + " and values of " + cache.core().valueType().getName()
					+ ", not " + keyType.getName() + " and " + valueType.getName());
		}
		return (TieredCache<K, V>) cache.decorated();
	}

	/** The cache itself, under its decorators; for tests and diagnostics. */
	@SuppressWarnings("unchecked")
	<K, V> DefaultTieredCache<K, V> core(String name) {
		return (DefaultTieredCache<K, V>) this.caches.get(name).core();
	}

	@Override
	public TieredCacheWarmup openWarmup() {
		return this.warmups.open();
	}

	/** A cache, evicting after commit, routed to its warm-up twin on the threads inside a warm-up. */
	private <K, V> Registered<K, V> register(String name, Class<K> keyType, Class<V> valueType) {
		DefaultTieredCache<K, V> core = newCache(name, keyType, valueType, this.redis, this.metrics);
		TieredCache<K, V> afterCommit = new TransactionAwareTieredCacheDecorator<>(core,
				this.metrics.forCache(name));
		BiFunction<RedisTier, TieredCacheMetrics, TieredCache<K, V>> twins = (redis,
				metrics) -> new TransactionAwareTieredCacheDecorator<>(newCache(name, keyType, valueType, redis, metrics),
						metrics.forCache(name));
		return new Registered<>(core,
				new WarmupRoutingTieredCache<>(afterCommit, () -> this.warmups.twin(name, twins)));
	}

	/** A cache over {@code redis}, its meters in {@code metrics}: a real one, or a warm-up's twin. */
	private <K, V> DefaultTieredCache<K, V> newCache(String name, Class<K> keyType, Class<V> valueType,
			RedisTier redis, TieredCacheMetrics metrics) {
		TieredCacheConfiguration spec = spec(name);
		TieredCacheMetrics.ForCache forCache = metrics.forCache(name);
		JsonValueCodec<V> codec = new JsonValueCodec<>(this.jsonMapper, valueType);
		Duration lockTtl = this.redisSettings.lockTtl();
		LocalTier<V> local = (this.mode == TieredCacheMode.TIERED)
				? LocalTier.caffeine(name, lockTtl, forCache, spec.l1MaximumSize(), this.ticker, this.watermark,
						this.feed, this.pending, this.refresher)
				: LocalTier.inFlightOnly(name, lockTtl, forCache);
		Generations generations = new Generations(name, redis, this.clock, this.watermark,
				() -> local.invalidateAll("generation"));
		RedisLoadProtocol<V> protocol = new RedisLoadProtocol<>(name, redis, codec, generations, spec,
				this.redisSettings, forCache);
		return new DefaultTieredCache<>(name, keyType, valueType, spec,
				new DefaultTieredCache.Collaborators<>(local, protocol, generations,
						new StaleIfError<>(spec, this.ticker, this.clock, protocol::decode), loaderGuard(name),
						this.ticker, this.watermark, this.feed, this.pending, forCache));
	}

	@Override
	public HotSetFill fillHotSet() {
		return this.hotSet.fill();
	}

	/** The fleet's hot set; for tests. */
	HotSetExchange hotSet() {
		return this.hotSet;
	}

	private Collection<DefaultTieredCache<?, ?>> cores() {
		return this.caches.values().stream().<DefaultTieredCache<?, ?>>map(Registered::core).toList();
	}

	private @Nullable DefaultTieredCache<?, ?> coreOrNull(String name) {
		Registered<?, ?> registered = this.caches.get(name);
		return (registered != null) ? registered.core() : null;
	}

	/** The Redis tier of the real caches; for tests. */
	RedisTier redisTier() {
		return this.redis;
	}


	/** The names of the caches created so far. */
	public Set<String> getCacheNames() {
		return Set.copyOf(this.caches.keySet());
	}

	/** Evicts every cache created so far, on every instance (one generation bump each). */
	public void evictAllCaches() {
		this.caches.values().forEach((cache) -> cache.decorated().evictAll());
	}

	/**
	 * The loader circuit breaker of cache {@code name} ({@code tiered-cache-loader-<name>}), unless its configuration
	 * has none: its state says whether that cache's loader (the database) is considered available, and its events
	 * let an application react to the change (for example, to stop its connection pool from backing off while the
	 * database is down).
	 */
	public Optional<CircuitBreaker> getLoaderCircuitBreaker(String name) {
		requireValidName(name);
		return Optional.ofNullable(loaderGuard(name).breaker());
	}

	/** The mode this manager serves. */
	public TieredCacheMode getMode() {
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
		AbstractRedisClient client = (this.connectionFactory instanceof LettuceConnectionFactory lettuce)
				? lettuce.getRequiredNativeClient() : null;
		if (client != null) {
			// On a cluster the topology tells failovers apart from restarts (ClusterFailovers); elsewhere the run_id.
			Consumer<String> newServer = (client instanceof RedisClusterClient)
					? (runId) -> this.failovers.streamServerChanged("the node of the invalidation stream restarted")
					: this.failovers::afterNewPrimary;
			this.listener = new InvalidationListener(client, this.redis.stream(), this.blockTimeout,
					"tiered-cache-invalidations-" + this.instanceId, this::onMessage, this.failovers::flush, newServer,
					this.metrics, this.watermark, this.feed, (client instanceof RedisClusterClient) ? null : this.server);
			this.listener.start();
		}
		else {
			logger.warn("Cross-instance invalidation needs a Lettuce connection factory; other "
					+ "instances' writes reach this instance's L1 only through its TTL");
		}
		this.retry.start();
		this.hotSet.start();
		if (client instanceof RedisClusterClient cluster) {
			this.failovers.follow(cluster);
		}
	}

	@Override
	public void stop() {
		this.running = false;
		InvalidationListener listener = this.listener;
		if (listener != null) {
			listener.stop();
		}
		this.failovers.stop();
		this.retry.stop();
		this.hotSet.stop();
		if (this.ownRefresher != null) {
			this.ownRefresher.shutdownNow();
		}
	}

	/** Daemon threads made on demand and gone when idle; a full queue rejects (the hit then starts no refresh). */
	private static ExecutorService refresher() {
		ThreadPoolExecutor executor = new ThreadPoolExecutor(REFRESH_THREADS, REFRESH_THREADS, 30, TimeUnit.SECONDS,
				new ArrayBlockingQueue<>(REFRESH_QUEUE_CAPACITY), (task) -> {
					Thread thread = new Thread(task, "tiered-cache-refresh");
					thread.setDaemon(true);
					return thread;
				});
		executor.allowCoreThreadTimeOut(true);
		return executor;
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

	PendingEvictions pending() {
		return this.pending;
	}

	/** The loader guard of cache {@code name}, shared by its warm-up twin. */
	LoaderGuard loaderGuard(String name) {
		return this.loaderGuards.computeIfAbsent(name,
				(key) -> new LoaderGuard(this.bulkheads, this.breakers, LOADER_GUARD_NAME + "-" + key, spec(key)));
	}

	/** The wall clock of Redis freshness and invalidation send times; for tests. */
	Clock clock() {
		return this.clock;
	}

	/** The breaker around every Redis call; for tests. */
	CircuitBreaker circuitBreaker() {
		return this.redis.breaker();
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
	@Nullable InvalidationListener listener() {
		return this.listener;
	}

	/** How long ago this instance last heard every invalidation, or {@code null} if it never has. */
	public @Nullable Duration getInvalidationSilence() {
		return this.watermark.silence();
	}

	/**
	 * How long ago the change feed last confirmed that both tiers hold every change committed before then (ADR
	 * 0037), or {@code null} if it never has or none is followed. Past {@code change-feed-max-lag}, reads go to the
	 * loader.
	 */
	public @Nullable Duration getChangeFeedSilence() {
		return this.feed.silence();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Appended to the invalidation stream after the feed's own invalidations, so that every instance applies those
	 * first.
	 */
	@Override
	public boolean changeFeedCaughtUp(Duration lag, @Nullable String checkpoint) {
		return onTheFeedsNode(
				() -> this.redis.announceChangeFeed(this.instanceId, this.clock.millis(), lag.toNanos(), checkpoint));
	}

	@Override
	public @Nullable String changeFeedCheckpoint() {
		return onTheFeedsNode(this.redis::changeFeedCheckpoint);
	}

	@Override
	public boolean changeFeedLanded(@Nullable String previous, String checkpoint) {
		return onTheFeedsNode(() -> this.redis.moveChangeFeedCheckpoint(previous, checkpoint));
	}

	/** A change feed's call to the stream's node; its failure is the feed's to handle (retry or stall). */
	private static <T extends @Nullable Object> T onTheFeedsNode(Supplier<T> call) {
		try {
			return call.get();
		}
		catch (UnavailableException ex) {
			throw new InvalidationFailedException(TieredCacheMetrics.ALL_CACHES, ex);
		}
	}

	/** The configuration of cache {@code name}: its own, else the defaults. */
	TieredCacheConfiguration spec(String name) {
		return this.configured.getOrDefault(name, this.defaults);
	}

	void onMessage(Map<String, String> message) {
		String cacheName = message.get("cache");
		String key = message.get("key");
		long generation = Long.parseLong(message.getOrDefault("gen", "0"));
		Registered<?, ?> registered = (cacheName != null) ? this.caches.get(cacheName) : null;
		DefaultTieredCache<?, ?> cache = (registered != null) ? registered.core() : null;
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
		if (cache != null && PendingEvictions.ALL.equals(key)
				&& RedisTier.REDIS_ONLY.equals(message.get(RedisTier.SCOPE))) {
			cache.onGenerationMoved(generation);
		}
		else if (cache != null && key != null) {
			cache.onInvalidation(key, generation);
		}
	}

	/** Whether the Redis servers behind the connections are confirmed; for tests. */
	ServerConfirmation serverConfirmation() {
		return this.server;
	}

	/** A node answered MOVED: the slot moved (a failover, a resharding) and this instance's topology is behind. */
	private void onMoved() {
		this.failovers.onMoved();
	}

	/** What happens after a failover; for tests. */
	FailoverGenerations failovers() {
		return this.failovers;
	}

	/** The retry of evictions Redis did not take; for tests. */
	PendingEvictionRetry retry() {
		return this.retry;
	}

	/** The application's registry if it has one, else a private one bound to the meter registry. */
	private static CircuitBreakerRegistry circuitBreakerRegistry(TieredCacheManagerBuilder builder) {
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
	private static BulkheadRegistry bulkheadRegistry(TieredCacheManagerBuilder builder) {
		if (builder.bulkheadRegistry != null) {
			return builder.bulkheadRegistry;
		}
		BulkheadRegistry registry = BulkheadRegistry.ofDefaults();
		if (builder.meterRegistry != null) {
			TaggedBulkheadMetrics.ofBulkheadRegistry(registry).bindTo(builder.meterRegistry);
		}
		return registry;
	}

	private static void requireValidName(String name) {
		if (name == null || !CACHE_NAME.matcher(name).matches()) {
			throw new IllegalArgumentException("Cache name '" + name
					+ "' must consist of letters, digits, '.', '_' and '-' (it is a segment of every Redis key)");
		}
	}

	/** A cache under its decorators, and the cache itself, which invalidations and retries reach directly. */
	private record Registered<K, V>(DefaultTieredCache<K, V> core, TieredCache<K, V> decorated) {
	}

}
