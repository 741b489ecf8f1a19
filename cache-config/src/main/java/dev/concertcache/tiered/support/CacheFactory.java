package dev.concertcache.tiered.support;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.regex.Pattern;

import com.github.benmanes.caffeine.cache.Ticker;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheMode;
import dev.concertcache.tiered.TieredCacheWarmup;
import dev.concertcache.tiered.eviction.CacheEvictions;
import dev.concertcache.tiered.format.JsonValueCodec;
import dev.concertcache.tiered.gate.FreshnessGate;
import dev.concertcache.tiered.loader.LoaderGuard;
import dev.concertcache.tiered.loader.LoaderReachability;
import dev.concertcache.tiered.local.LocalTier;
import dev.concertcache.tiered.log.InvalidationStream;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;
import dev.concertcache.tiered.redis.Generations;
import dev.concertcache.tiered.redis.RedisLoadProtocol;
import dev.concertcache.tiered.redis.RedisTier;

/**
 * Builds each cache of a {@link DefaultTieredCacheManager} from its configuration and the parts every cache shares:
 * its tiers, its generation, its loader guard (shared with its warm-up twin), under the after-commit and warm-up
 * decorators.
 */
final class CacheFactory {

	/**
	 * Threads of the default refresh-ahead executor: a refresh is mostly one Redis read; two, so that one waiting
	 * for a slow loader does not hold the others back.
	 */
	static final int REFRESH_THREADS = 2;

	/** Refreshes queued at most; past it a hit starts none and the entry expires as it would without. */
	static final int REFRESH_QUEUE_CAPACITY = 1024;

	private static final Pattern CACHE_NAME = Pattern.compile("[A-Za-z0-9._-]+");

	private final TieredCacheMode mode;

	private final TieredCacheConfiguration defaults;

	private final Map<String, TieredCacheConfiguration> configured;

	private final RedisTier redis;

	private final long streamMaxLength;

	private final TieredCacheMetrics metrics;

	private final Ticker ticker;

	private final Clock clock;

	/** One for every cache: a mapper caches what it learns of each type. */
	private final JsonMapper jsonMapper = JsonValueCodec.defaultMapper();

	private final FreshnessGate gate;

	private final RedisLoadProtocol.Settings redisSettings;

	private final BulkheadRegistry bulkheads;

	private final CircuitBreakerRegistry breakers;

	private final ConcurrentMap<String, LoaderGuard> loaderGuards = new ConcurrentHashMap<>();

	/** Shared by every cache's loader guard: the caches of one manager load from one database. */
	private final LoaderReachability loaderReachability;

	private final Warmups warmups;

	/** Where the current thread's reads go, outside a warm-up. */
	private final ThreadLocal<ThreadRoute> threadRoute = ThreadLocal.withInitial(() -> ThreadRoute.CACHES);

	/** The scopes opened on the usual route end by going back to it; made once, as a selector opens one per read. */
	private final TieredCacheManager.ReadThrough readThroughFromCaches = () -> this.threadRoute.set(ThreadRoute.CACHES);

	private final TieredCacheManager.InMemoryOnly inMemoryFromCaches = () -> this.threadRoute.set(ThreadRoute.CACHES);

	/** Runs L1 refresh-ahead reads ({@link LocalTier}); shut down with the manager when it made it. */
	private final Executor refresher;

	private final @Nullable ExecutorService ownRefresher;

	CacheFactory(TieredCacheManagerBuilder builder, CircuitBreakerRegistry breakers, RedisTier redis,
			TieredCacheMetrics metrics, Clock clock, String instanceId, FreshnessGate gate) {
		this.mode = builder.mode;
		this.defaults = builder.defaults.validate("tiered-cache.defaults");
		Map<String, TieredCacheConfiguration> configured = new LinkedHashMap<>();
		builder.configured.forEach((name, configuration) -> {
			requireValidName(name);
			configured.put(name, configuration.validate("tiered-cache.caches." + name));
		});
		this.configured = Map.copyOf(configured);
		this.redis = redis;
		this.streamMaxLength = builder.streamMaxLength;
		this.metrics = metrics;
		this.ticker = (builder.ticker != null) ? builder.ticker : Ticker.systemTicker();
		this.clock = clock;
		this.gate = gate;
		this.breakers = breakers;
		this.bulkheads = builder.bulkheadRegistry();
		this.loaderReachability = builder.loaderReachability;
		this.ownRefresher = (builder.refresher != null) ? null : refresher();
		this.refresher = (builder.refresher != null) ? builder.refresher : this.ownRefresher;
		this.warmups = new Warmups(redis, instanceId);
		this.redisSettings = new RedisLoadProtocol.Settings(this.ticker, clock, gate, instanceId,
				builder.lockTtl, builder.lockPollInterval, builder.tombstoneTtl, builder.maxSilence);
	}

	TieredCacheWarmup openWarmup() {
		return this.warmups.open();
	}

	void stop() {
		if (this.ownRefresher != null) {
			this.ownRefresher.shutdownNow();
		}
	}

	/**
	 * Routes the calling thread's reads to the loaders until the returned scope is closed (ADR 0038); inside a
	 * warm-up, its twins still.
	 */
	TieredCacheManager.ReadThrough readThrough() {
		ThreadRoute previous = routeThread(ThreadRoute.LOADERS);
		return (previous == ThreadRoute.CACHES) ? this.readThroughFromCaches : () -> this.threadRoute.set(previous);
	}

	/**
	 * Confines the calling thread's reads to what L1 holds until the returned scope is closed; inside a warm-up, its
	 * twins still.
	 */
	TieredCacheManager.InMemoryOnly inMemoryOnly() {
		ThreadRoute previous = routeThread(ThreadRoute.MEMORY);
		return (previous == ThreadRoute.CACHES) ? this.inMemoryFromCaches : () -> this.threadRoute.set(previous);
	}

	/** Routes the calling thread's reads to {@code route}; returns the route it had. */
	private ThreadRoute routeThread(ThreadRoute route) {
		ThreadRoute previous = this.threadRoute.get();
		this.threadRoute.set(route);
		return previous;
	}

	/**
	 * A cache, evicting after commit, routed to its warm-up twin on the threads inside a warm-up, to its loader on the
	 * threads reading through and to its L1 alone on the threads that must not wait.
	 */
	<K, V> Registered<K, V> register(String name, Class<K> keyType, Class<V> valueType) {
		DefaultTieredCache<K, V> core = newCache(name, keyType, valueType, this.redis, this.metrics);
		TieredCache<K, V> afterCommit = new TransactionAwareTieredCacheDecorator<>(core,
				this.metrics.forCache(name));
		BiFunction<RedisTier, TieredCacheMetrics, TieredCache<K, V>> twins = (redis,
				metrics) -> new TransactionAwareTieredCacheDecorator<>(newCache(name, keyType, valueType, redis, metrics),
						metrics.forCache(name));
		TieredCache<K, V> loaderOnly = new LoaderOnlyTieredCache<>(afterCommit, loaderGuard(name));
		TieredCache<K, V> inMemory = new InMemoryTieredCache<>(core, afterCommit);
		return new Registered<>(core, new ThreadRoutedTieredCache<>(afterCommit, () -> {
			TieredCache<K, V> twin = this.warmups.twin(name, twins);
			if (twin != null) {
				return twin;
			}
			return switch (this.threadRoute.get()) {
				case CACHES -> null;
				case LOADERS -> loaderOnly;
				case MEMORY -> inMemory;
			};
		}));
	}

	/** Where a thread's reads go, outside a warm-up. */
	private enum ThreadRoute {

		/** Through the tiers to the loader. */
		CACHES,

		/** To the loader alone (ADR 0038). */
		LOADERS,

		/** To L1 alone, never waiting. */
		MEMORY

	}

	/** A real cache, or a warm-up's twin (over its own keys and meters). */
	private <K, V> DefaultTieredCache<K, V> newCache(String name, Class<K> keyType, Class<V> valueType,
			RedisTier redis, TieredCacheMetrics metrics) {
		TieredCacheConfiguration spec = spec(name);
		TieredCacheMetrics.ForCache forCache = metrics.forCache(name);
		JsonValueCodec<V> codec = new JsonValueCodec<>(this.jsonMapper, valueType);
		Duration lockTtl = this.redisSettings.lockTtl();
		LocalTier<V> local = (this.mode == TieredCacheMode.TIERED)
				? LocalTier.caffeine(name, lockTtl, forCache, spec.l1MaximumSize(), this.ticker, this.gate,
						this.refresher)
				: LocalTier.inFlightOnly(name, lockTtl, forCache);
		Generations generations = new Generations(name, redis, this.clock, this.gate.heard(),
				() -> local.invalidateAll("generation"));
		RedisLoadProtocol<V> protocol = new RedisLoadProtocol<>(name, redis, codec, generations, spec,
				this.redisSettings, forCache);
		return new DefaultTieredCache<>(name, keyType, valueType, spec,
				new DefaultTieredCache.Collaborators<>(local, protocol,
						new CacheEvictions(name, local, redis, InvalidationStream.of(redis, this.streamMaxLength),
								codec.shape(), this.redisSettings, generations, forCache),
						new StaleIfError<>(spec, this.ticker, this.clock, protocol::decode), loaderGuard(name),
						this.ticker, this.gate, forCache));
	}

	/** The loader guard of cache {@code name}, shared by its warm-up twin. */
	LoaderGuard loaderGuard(String name) {
		return this.loaderGuards.computeIfAbsent(name,
				(key) -> new LoaderGuard(this.loaderReachability, this.bulkheads, this.breakers,
						DefaultTieredCacheManager.LOADER_GUARD_NAME + "-" + key, spec(key).loaderBulkhead(),
						spec(key).loaderCircuitBreaker()));
	}

	/** The configuration of cache {@code name}: its own, else the defaults. */
	TieredCacheConfiguration spec(String name) {
		return this.configured.getOrDefault(name, this.defaults);
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

	/** A cache under its decorators, and the cache itself, which invalidations and retries reach directly. */
	record Registered<K, V>(DefaultTieredCache<K, V> core, TieredCache<K, V> decorated) {
	}

	static void requireValidName(String name) {
		if (name == null || !CACHE_NAME.matcher(name).matches()) {
			throw new IllegalArgumentException("Cache name '" + name
					+ "' must consist of letters, digits, '.', '_' and '-' (it is a segment of every Redis key)");
		}
	}

}
