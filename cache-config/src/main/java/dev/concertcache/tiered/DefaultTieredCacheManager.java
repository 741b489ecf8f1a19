package dev.concertcache.tiered;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
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

	/** Default approximate length of the invalidation stream. */
	public static final long DEFAULT_STREAM_MAX_LENGTH = 10_000;

	/** A read a few times per {@link #DEFAULT_MAX_SILENCE}, one small command per instance when idle. */
	public static final Duration DEFAULT_BLOCK_TIMEOUT = Duration.ofMillis(250);

	/** Within a freshness promise of one second, with a quarter of it left for delivery. */
	public static final Duration DEFAULT_MAX_SILENCE = Duration.ofMillis(750);

	/** Default time a tombstone stays in Redis. */
	public static final Duration DEFAULT_TOMBSTONE_TTL = Duration.ofSeconds(30);

	/** Default number of evictions kept in memory while Redis cannot be reached. */
	public static final int DEFAULT_PENDING_MAXIMUM_SIZE = 10_000;

	/** Default interval between attempts to send evictions that could not reach Redis. */
	public static final Duration DEFAULT_RETRY_INTERVAL = Duration.ofMillis(100);

	/** Default time the per-key load lock is held at most. */
	public static final Duration DEFAULT_LOCK_TTL = Duration.ofSeconds(2);

	/** Default interval at which a waiting instance looks for the lock holder's value. */
	public static final Duration DEFAULT_LOCK_POLL_INTERVAL = Duration.ofMillis(20);

	/** Default key prefix. */
	public static final String DEFAULT_KEY_PREFIX = "tiered-cache";

	/**
	 * Threads of the default refresh-ahead executor: a refresh is mostly one Redis read; two, so that one waiting
	 * for a slow loader does not hold the others back.
	 */
	static final int REFRESH_THREADS = 2;

	/** Refreshes queued at most; past it a hit starts none and the entry expires as it would without. */
	static final int REFRESH_QUEUE_CAPACITY = 1024;

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

	private final Duration retryInterval;

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

	private volatile @Nullable ClusterFailovers failovers;

	private volatile @Nullable ExecutorService failoverMoves;

	/** Runs before the generations move after a cluster failover; tests park the move there. */
	private volatile Runnable beforeFailoverMove = () -> {
	};

	/** The highest cluster config epoch this instance moved its generations for (ADR 0035). */
	private final AtomicLong failoverEpoch = new AtomicLong(-1);

	/** The generation move of the last failover or new primary, which a cache Redis refused it to is retried with. */
	private volatile ToLongFunction<String> failoverMove = (cache) -> {
		throw new IllegalStateException("no failover yet");
	};

	private final AtomicLong failoversHandled = new AtomicLong();

	private volatile @Nullable ScheduledExecutorService retries;

	private final HotSetConfiguration hotSet;

	private volatile @Nullable ScheduledExecutorService hotSetPublisher;

	private volatile boolean running;

	/** Runs L1 refresh-ahead reads ({@link LocalTier}); shut down with the manager when it made it. */
	private final Executor refresher;

	private final @Nullable ExecutorService ownRefresher;

	private DefaultTieredCacheManager(Builder builder) {
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
		this.retryInterval = builder.retryInterval;
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
		this.hotSet = builder.hotSet.validate("tiered-cache.hot-set");
		this.redisSettings = new RedisLoadProtocol.Settings(this.ticker, this.clock, this.pending, this.server,
				this.instanceId, builder.lockTtl, builder.lockPollInterval, builder.tombstoneTtl, builder.maxSilence);
	}

	/** Starts building a manager over {@code connectionFactory}, in mode TIERED unless told otherwise. */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		return new Builder(connectionFactory);
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

	/**
	 * {@inheritDoc}
	 * <p>
	 * Reads the hot set of every cache created so far, then fills their L1 in batches of
	 * {@value HotSetConfiguration#FILL_BATCH} keys (one MGET each), the caches in turn, on a thread of its own: at
	 * the fill timeout this returns whatever a Redis that does not answer is doing, and the thread stops after its
	 * current command (the Redis command timeout). A reservation it leaves in L1 meanwhile makes a reader wait for
	 * that command at most, then read as usual.
	 */
	@Override
	public HotSetFill fillHotSet() {
		if (this.mode != TieredCacheMode.TIERED || !this.hotSet.enabled()) {
			return HotSetFill.NONE;
		}
		long started = System.nanoTime();
		HotSetFiller filler = new HotSetFiller();
		Thread thread = new Thread(filler, "tiered-cache-hot-set-fill");
		thread.setDaemon(true);
		thread.start();
		try {
			thread.join(Math.max(1, this.hotSet.fillTimeout().toMillis()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		filler.stopped = true;
		long took = System.nanoTime() - started;
		boolean complete = filler.complete;
		this.metrics.hotSetFill(took, complete);
		HotSetFill fill = new HotSetFill(filler.published, filler.filled.get(), Duration.ofNanos(took), complete);
		logger.info("Filled L1 from the hot set: " + fill.filled() + " of " + fill.published() + " keys in "
				+ fill.took().toMillis() + " ms" + (complete ? "" : " (stopped early: fill timeout or Redis failure)"));
		return fill;
	}

	/**
	 * Publishes the keys of every cache's hottest L1 entries into its hot set; scheduled every
	 * {@code publish-interval}, and callable by tests.
	 */
	void publishHotSet() {
		long ttl = this.hotSet.publishInterval().toMillis() * HotSetConfiguration.TTL_INTERVALS;
		for (Registered<?, ?> cache : this.caches.values()) {
			List<String> hottest = cache.core().hottest(this.hotSet.size());
			if (hottest.isEmpty()) {
				continue;
			}
			try {
				this.redis.publishHot(cache.core().name(), hottest, this.hotSet.size(), ttl, this.clock.millis());
			}
			catch (UnavailableException ex) {
				// The next publish tries again; a joining instance meanwhile reads the previous one.
				return;
			}
		}
	}

	/** One fill: the hot keys of every cache, then their values in batches, the caches in turn, until stopped. */
	private final class HotSetFiller implements Runnable {

		volatile boolean stopped;

		volatile boolean complete;

		volatile int published;

		final AtomicInteger filled = new AtomicInteger();

		@Override
		public void run() {
			try {
				int size = DefaultTieredCacheManager.this.hotSet.size();
				Map<DefaultTieredCache<?, ?>, List<String>> hot = new LinkedHashMap<>();
				for (Registered<?, ?> cache : DefaultTieredCacheManager.this.caches.values()) {
					if (this.stopped) {
						return;
					}
					List<String> keys = DefaultTieredCacheManager.this.redis.hotKeys(cache.core().name(), size);
					hot.put(cache.core(), keys);
					this.published += keys.size();
				}
				int batch = HotSetConfiguration.FILL_BATCH;
				for (int from = 0; hot.values().stream().anyMatch(hasMoreThan(from)); from += batch) {
					for (Map.Entry<DefaultTieredCache<?, ?>, List<String>> cache : hot.entrySet()) {
						List<String> keys = cache.getValue();
						if (this.stopped) {
							return;
						}
						if (keys.size() > from) {
							int filled = cache.getKey().fill(keys.subList(from, Math.min(keys.size(), from + batch)));
							this.filled.addAndGet(filled);
							DefaultTieredCacheManager.this.metrics.hotSetFilled(cache.getKey().name(), filled);
						}
					}
				}
				this.complete = !this.stopped;
			}
			catch (UnavailableException ex) {
				logger.warn("Hot-set fill stopped, Redis is not available: " + ex.getMessage());
			}
			catch (RuntimeException ex) {
				logger.warn("Hot-set fill failed", ex);
			}
		}

		private static Predicate<List<String>> hasMoreThan(int from) {
			return (keys) -> keys.size() > from;
		}

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

	/** The Redis tier of the real caches; for tests. */
	RedisTier redisTier() {
		return this.redis;
	}

	/** The hot-set settings; for tests. */
	HotSetConfiguration hotSet() {
		return this.hotSet;
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
					? (runId) -> streamServerChanged("the node of the invalidation stream restarted")
					: this::afterNewPrimary;
			this.listener = new InvalidationListener(client, this.redis.stream(), this.blockTimeout,
					"tiered-cache-invalidations-" + this.instanceId, this::onMessage, this::flush, newServer,
					this.metrics, this.watermark, this.feed, (client instanceof RedisClusterClient) ? null : this.server);
			this.listener.start();
		}
		else {
			logger.warn("Cross-instance invalidation needs a Lettuce connection factory; other "
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
		if (this.mode == TieredCacheMode.TIERED && this.hotSet.enabled()) {
			// A thread of its own: a slow publish must not hold back the retry of evictions.
			ScheduledExecutorService publisher = Executors.newSingleThreadScheduledExecutor((task) -> {
				Thread thread = new Thread(task, "tiered-cache-hot-set");
				thread.setDaemon(true);
				return thread;
			});
			long every = this.hotSet.publishInterval().toMillis();
			publisher.scheduleWithFixedDelay(this::publishHotSet, every, every, TimeUnit.MILLISECONDS);
			this.hotSetPublisher = publisher;
		}
		if (client instanceof RedisClusterClient cluster) {
			// Reads stop using Redis before Lettuce routes by the new topology (ClusterFailovers); the generations
			// move off it (Redis round trips), on a thread of their own: not behind a retry of pending evictions.
			ExecutorService moves = Executors.newSingleThreadExecutor((task) -> {
				Thread thread = new Thread(task, "tiered-cache-failover");
				thread.setDaemon(true);
				return thread;
			});
			this.failoverMoves = moves;
			int streamSlot = SlotHash.getSlot(this.redis.stream());
			this.failovers = new ClusterFailovers(cluster, (epoch, slots) -> {
				long seen = this.server.disconnected();
				boolean streamMoved = slots.get(streamSlot);
				moves.execute(() -> {
					try {
						this.beforeFailoverMove.run();
						afterFailover(epoch, streamMoved);
					}
					finally {
						// A cache whose move failed is pending: its reads skip Redis on their own.
						this.server.confirmed(seen);
					}
				});
			});
			this.failovers.start();
		}
	}

	@Override
	public void stop() {
		this.running = false;
		InvalidationListener listener = this.listener;
		if (listener != null) {
			listener.stop();
		}
		ClusterFailovers failovers = this.failovers;
		if (failovers != null) {
			failovers.stop();
		}
		ScheduledExecutorService retries = this.retries;
		if (retries != null) {
			retries.shutdownNow();
		}
		ScheduledExecutorService publisher = this.hotSetPublisher;
		if (publisher != null) {
			publisher.shutdownNow();
		}
		ExecutorService moves = this.failoverMoves;
		if (moves != null) {
			moves.shutdownNow();
		}
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

	void flush(String reason) {
		logger.info("Flushing L1 of every cache: " + reason);
		this.redis.forgetRegistrations();
		this.caches.values().forEach((cache) -> cache.core().flush());
	}

	/**
	 * After a primary of the cluster changed (config epoch {@code epoch}): the promoted replica may lack the last
	 * tombstones and generation moves of the old one, so no value written before is read from Redis again. Every
	 * cache moves to a new generation (once per epoch across the fleet: the first instance moves it and announces
	 * it, the others adopt it). L1 stays unless the stream's own slot moved ({@code streamMoved}): every
	 * invalidation announced before the failover reached L1 through the stream (an eviction whose tombstone did not
	 * land is announced as such and kept pending by every instance), but a promoted replica of the stream's node may
	 * lack its last announcements (ADR 0035, revision 5), and L1 is cleared then, unless a change feed is followed
	 * ({@link #streamServerChanged}). A cache whose move Redis does not take yet is queued as an
	 * evict-all: until it lands, this instance reads that cache from the loader, not from Redis.
	 */
	void afterFailover(long epoch, boolean streamMoved) {
		if (streamMoved) {
			// Whatever the epoch: two failovers at once may be reported once, under the higher epoch.
			streamServerChanged("the invalidation stream's slot has another primary, which may lack its last "
					+ "announcements");
			InvalidationListener listener = this.listener;
			if (listener != null) {
				listener.serverMayHaveChanged();
			}
		}
		if (this.failoverEpoch.getAndAccumulate(epoch, Math::max) >= epoch) {
			return;
		}
		logger.warn("Redis Cluster failed over (config epoch " + epoch + "): moving every cache to a new generation");
		moveEveryGeneration((cache) -> this.redis.evictAllAfterFailover(cache, epoch, this.instanceId,
				this.clock.millis()), false);
	}

	/**
	 * After the invalidation listener found another server behind a standalone connection ({@code run_id}
	 * {@code runId}): a replica a Sentinel promoted may lack the last tombstones, as on a cluster, so every cache
	 * moves to a new generation, once per primary across the fleet (ADR 0035). A Redis that restarted empty gets
	 * the same: nothing is lost by it.
	 */
	void afterNewPrimary(String runId) {
		streamServerChanged("another Redis server (run_id " + runId + ")");
		logger.warn("Another Redis primary (run_id " + runId + "): moving every cache to a new generation");
		moveEveryGeneration((cache) -> this.redis.evictAllForNewPrimary(cache, runId, this.instanceId,
				this.clock.millis()), !this.feed.isFollowed());
	}

	/**
	 * Another server holds the invalidation stream, which may lack announcements this instance never read. L1 is
	 * cleared, unless a change feed is followed: L1 is then served only as far as the feed's confirmations reach,
	 * and the feed's next confirmation on that server comes only after it invalidated again everything past the
	 * checkpoint the server kept, which its lost announcements were (ADR 0037, revision 2).
	 */
	private void streamServerChanged(String reason) {
		if (this.feed.isFollowed()) {
			logger.info("Keeping L1 until the change feed confirms again: " + reason);
		}
		else {
			flush(reason);
		}
	}

	/**
	 * Moves every cache to the generation {@code move} returns for its name (moved by this call or by another
	 * instance for the same failover), clearing its L1 if {@code clearL1}. A cache whose move Redis does not take
	 * (its counter's node is the one that failed, say) is read past Redis until a retry moves it: queued as an
	 * evict-all if {@code clearL1} (and its L1 cleared), else as the same move, which keeps every instance's L1.
	 */
	private void moveEveryGeneration(ToLongFunction<String> move, boolean clearL1) {
		this.redis.forgetRegistrations();
		this.failoverMove = move;
		for (Registered<?, ?> registered : this.caches.values()) {
			DefaultTieredCache<?, ?> cache = registered.core();
			try {
				long generation = move.applyAsLong(cache.name());
				if (clearL1) {
					cache.onInvalidation(PendingEvictions.ALL, generation);
				}
				else {
					cache.advanceGeneration(generation);
				}
			}
			catch (RuntimeException ex) {
				if (clearL1) {
					this.pending.add(cache.name(), PendingEvictions.ALL);
					cache.flush();
				}
				else {
					this.pending.add(cache.name(), PendingEvictions.GENERATION);
				}
			}
		}
		this.failoversHandled.incrementAndGet();
	}

	/** Moves {@code cache}'s generation again as the last failover did; whether Redis took it. */
	private boolean retryFailoverMove(DefaultTieredCache<?, ?> cache) {
		try {
			cache.advanceGeneration(this.failoverMove.applyAsLong(cache.name()));
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/** A node answered MOVED: the slot moved (a failover, a resharding) and this instance's topology is behind. */
	private void onMoved() {
		ClusterFailovers failovers = this.failovers;
		if (failovers != null) {
			failovers.refresh();
		}
	}

	/** Whether the Redis servers behind the connections are confirmed; for tests. */
	ServerConfirmation serverConfirmation() {
		return this.server;
	}

	/** Parks the generation moves after the next cluster failovers; for tests of what a read finds meanwhile. */
	void beforeFailoverMove(Runnable hook) {
		this.beforeFailoverMove = hook;
	}

	/** How many failovers (or new primaries) this instance has moved its generations for; for tests. */
	long failoversHandled() {
		return this.failoversHandled.get();
	}

	void retryPending() {
		try {
			// Not gated by the Redis breaker, as evictions are not: the first one Redis does not take ends the pass.
			if (this.pending.isEmpty()) {
				return;
			}
			if (this.pending.overflowed()) {
				this.pending.overflowDone();
				for (Registered<?, ?> cache : this.caches.values()) {
					if (!cache.core().evictAllNow()) {
						return;
					}
				}
			}
			for (Map.Entry<Eviction, Long> request : this.pending.snapshot()) {
				Eviction eviction = request.getKey();
				Registered<?, ?> registered = this.caches.get(eviction.cache());
				if (registered == null) {
					this.pending.done(eviction, request.getValue());
					continue;
				}
				// Runs the whole eviction again, L1 included: a read between Redis' return and this replay
				// may have put the old L2 value back into this instance's L1. Forgotten only once Redis took it:
				// until then this instance's reads of the key do not use Redis.
				DefaultTieredCache<?, ?> cache = registered.core();
				boolean taken = switch (eviction.key()) {
					case PendingEvictions.ALL -> cache.evictAllNow();
					case PendingEvictions.GENERATION -> retryFailoverMove(cache);
					default -> cache.evictNow(eviction.key());
				};
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

	private static void requireValidName(String name) {
		if (name == null || !CACHE_NAME.matcher(name).matches()) {
			throw new IllegalArgumentException("Cache name '" + name
					+ "' must consist of letters, digits, '.', '_' and '-' (it is a segment of every Redis key)");
		}
	}

	/** A cache under its decorators, and the cache itself, which invalidations and retries reach directly. */
	private record Registered<K, V>(DefaultTieredCache<K, V> core, TieredCache<K, V> decorated) {
	}

	/**
	 * Builds a {@link DefaultTieredCacheManager}; every setting but the connection factory has a default.
	 */
	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private TieredCacheMode mode = TieredCacheMode.TIERED;

		private String keyPrefix = DEFAULT_KEY_PREFIX;

		private @Nullable String instanceId;

		private TieredCacheConfiguration defaults = TieredCacheConfiguration.defaultConfig();

		private final Map<String, TieredCacheConfiguration> configured = new LinkedHashMap<>();

		private long streamMaxLength = DEFAULT_STREAM_MAX_LENGTH;

		private Duration blockTimeout = DEFAULT_BLOCK_TIMEOUT;

		private Duration maxSilence = DEFAULT_MAX_SILENCE;

		private Duration tombstoneTtl = DEFAULT_TOMBSTONE_TTL;

		private int pendingMaximumSize = DEFAULT_PENDING_MAXIMUM_SIZE;

		private Duration retryInterval = DEFAULT_RETRY_INTERVAL;

		private Duration lockTtl = DEFAULT_LOCK_TTL;

		private Duration lockPollInterval = DEFAULT_LOCK_POLL_INTERVAL;

		private CircuitBreakerConfig redisCircuitBreaker = DEFAULT_REDIS_CIRCUIT_BREAKER;

		private @Nullable MeterRegistry meterRegistry;

		private @Nullable CircuitBreakerRegistry circuitBreakerRegistry;

		private @Nullable BulkheadRegistry bulkheadRegistry;

		private @Nullable Ticker ticker;

		private @Nullable Clock clock;

		private @Nullable JsonMapper jsonMapper;

		private @Nullable Ticker watermarkTicker;

		private @Nullable Duration changeFeedMaxLag;

		private HotSetConfiguration hotSet = HotSetConfiguration.defaultConfig();

		private @Nullable Executor refresher;

		private Builder(RedisConnectionFactory connectionFactory) {
			Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
			this.connectionFactory = connectionFactory;
		}

		/** Which tiers serve reads: REDIS or TIERED (the default). */
		public Builder mode(TieredCacheMode mode) {
			this.mode = mode;
			return this;
		}

		/**
		 * The first segment of every Redis key and of the invalidation stream; change it to start over with an
		 * empty L2 after an incompatible change of the cached types.
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
			return this;
		}

		/** This instance's identity in invalidation messages; by default a random UUID per start. */
		public Builder instanceId(String instanceId) {
			this.instanceId = instanceId;
			return this;
		}

		/** The configuration of every cache that has none of its own. */
		public Builder cacheDefaults(TieredCacheConfiguration defaults) {
			this.defaults = defaults;
			return this;
		}

		/** The configuration of every cache that has none of its own, so far. */
		public TieredCacheConfiguration cacheDefaults() {
			return this.defaults;
		}

		/** The configuration of cache {@code name}. */
		public Builder withCacheConfiguration(String name, TieredCacheConfiguration configuration) {
			this.configured.put(name, configuration);
			return this;
		}

		/** Approximate number of messages the invalidation stream keeps; an instance further behind flushes L1. */
		public Builder streamMaxLength(long streamMaxLength) {
			this.streamMaxLength = streamMaxLength;
			return this;
		}

		/** How long one blocking read of the invalidation stream waits; keep it well below max-silence. */
		public Builder blockTimeout(Duration blockTimeout) {
			this.blockTimeout = blockTimeout;
			return this;
		}

		/**
		 * How long this instance may go without proof that it heard every invalidation before L1 stops serving
		 * entries read before then.
		 */
		public Builder maxSilence(Duration maxSilence) {
			this.maxSilence = maxSilence;
			return this;
		}

		/**
		 * Follows an external change feed (a reader of the database's binary log) that invalidates changes other
		 * applications commit and confirms its progress with {@link #changeFeedCaughtUp}: while its last
		 * confirmation is older than {@code maxLag}, neither tier is trusted and reads go to the loader (ADR 0037).
		 * Without it (the default), only the invalidation stream bounds what the tiers serve.
		 */
		public Builder changeFeedMaxLag(Duration maxLag) {
			this.changeFeedMaxLag = maxLag;
			return this;
		}

		/** Time an eviction's tombstone stays in Redis. */
		public Builder tombstoneTtl(Duration tombstoneTtl) {
			this.tombstoneTtl = tombstoneTtl;
			return this;
		}

		/** Evictions kept in memory while Redis cannot be reached; past it every cache is evicted as a whole. */
		public Builder pendingMaximumSize(int pendingMaximumSize) {
			this.pendingMaximumSize = pendingMaximumSize;
			return this;
		}

		/**
		 * Runs the L1 refresh-ahead reads ({@link TieredCacheConfiguration#l1RefreshAhead()}) instead of the manager's
		 * own two daemon threads; it may reject a task when busy.
		 */
		public Builder refresher(Executor refresher) {
			this.refresher = refresher;
			return this;
		}

		/** Interval between attempts to send evictions that could not reach Redis. */
		public Builder retryInterval(Duration retryInterval) {
			this.retryInterval = retryInterval;
			return this;
		}

		/** Time the per-key load lock is held at most, and the longest other instances wait for its holder. */
		public Builder lockTtl(Duration lockTtl) {
			this.lockTtl = lockTtl;
			return this;
		}

		/** Interval at which a waiting instance looks for the lock holder's value in Redis. */
		public Builder lockPollInterval(Duration lockPollInterval) {
			this.lockPollInterval = lockPollInterval;
			return this;
		}

		/** The {@value #CIRCUIT_BREAKER_NAME} breaker around every Redis call. */
		public Builder redisCircuitBreaker(CircuitBreakerConfig redisCircuitBreaker) {
			this.redisCircuitBreaker = redisCircuitBreaker;
			return this;
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
		 * The registry the {@value #LOADER_GUARD_NAME} bulkheads are created in; by default a private one, bound to
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

		/**
		 * The hot set: how often this instance publishes its hottest keys, how many, and how long a fill before
		 * readiness may take (see {@link HotSetConfiguration}).
		 */
		public Builder hotSet(HotSetConfiguration hotSet) {
			this.hotSet = hotSet;
			return this;
		}

		public DefaultTieredCacheManager build() {
			return new DefaultTieredCacheManager(this);
		}

	}

}
