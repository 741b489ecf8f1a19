package dev.concertcache.tiered.support;

import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

import com.github.benmanes.caffeine.cache.Ticker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.Assert;

import dev.concertcache.tiered.HotSetFill;
import dev.concertcache.tiered.InvalidationFailedException;
import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheMode;
import dev.concertcache.tiered.TieredCacheWarmup;
import dev.concertcache.tiered.eviction.CacheEvictions;
import dev.concertcache.tiered.eviction.PendingEvictionRetry;
import dev.concertcache.tiered.failover.FailoverGenerations;
import dev.concertcache.tiered.gate.FreshnessGate;
import dev.concertcache.tiered.hotset.HotSetExchange;
import dev.concertcache.tiered.log.InvalidationListener;
import dev.concertcache.tiered.log.InvalidationStream;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;
import dev.concertcache.tiered.redis.RedisTier;
import dev.concertcache.tiered.redis.RedisUnavailableException;

/**
 * The {@link TieredCacheManager} of modes {@link TieredCacheMode#TIERED TIERED} (Caffeine, then Redis) and
 * {@link TieredCacheMode#REDIS REDIS} (Redis only). Build one with {@link #builder}; the auto-configuration does.
 * <p>
 * As a {@link SmartLifecycle} it starts the invalidation listener (a daemon thread reading the Redis stream on
 * its own connection), the retry of evictions that could not reach Redis and (mode TIERED) the publishing of the
 * hot set, and stops them on shutdown.
 */
public final class DefaultTieredCacheManager implements TieredCacheManager, SmartLifecycle {

	/** The name of the circuit breaker around every Redis call, as its metrics show it. */
	public static final String CIRCUIT_BREAKER_NAME = "tiered-cache-redis";

	/**
	 * The prefix of the names of each cache's loader circuit breaker and bulkhead ({@code tiered-cache-loader-<cache>}),
	 * as their metrics and {@code resilience4j.*.instances} show them.
	 */
	public static final String LOADER_GUARD_NAME = "tiered-cache-loader";

	private static final Log logger = LogFactory.getLog(DefaultTieredCacheManager.class);

	private final TieredCacheMode mode;

	private final RedisConnectionFactory connectionFactory;

	private final RedisTier redis;

	private final InvalidationStream stream;

	private final TieredCacheMetrics metrics;

	private final Clock clock;

	private final String instanceId;

	private final Duration blockTimeout;

	private final FreshnessGate gate;

	private final ConcurrentMap<String, CacheFactory.Registered<?, ?>> caches = new ConcurrentHashMap<>();

	private volatile @Nullable InvalidationListener listener;

	private final FailoverGenerations failovers;

	private final PendingEvictionRetry retry;

	private final HotSetExchange hotSet;

	private volatile boolean running;

	private final CacheFactory factory;

	private final InvalidationDispatch dispatch;

	DefaultTieredCacheManager(TieredCacheManagerBuilder builder) {
		this.mode = builder.mode;
		Assert.state(this.mode != TieredCacheMode.NONE, "Mode NONE needs no cache manager: every read calls the loader");
		this.connectionFactory = builder.connectionFactory;
		this.metrics = new TieredCacheMetrics(
				(builder.meterRegistry != null) ? builder.meterRegistry : new SimpleMeterRegistry());
		this.clock = (builder.clock != null) ? builder.clock : Clock.systemUTC();
		this.instanceId = (builder.instanceId != null) ? builder.instanceId : UUID.randomUUID().toString();
		this.blockTimeout = builder.blockTimeout;
		Ticker watermarkTicker = (builder.watermarkTicker != null) ? builder.watermarkTicker : Ticker.systemTicker();
		this.gate = new FreshnessGate(watermarkTicker, builder.maxSilence, builder.disconnectMaxAge,
				builder.changeFeedMaxLag, builder.pendingMaximumSize);
		CircuitBreakerRegistry breakers = builder.circuitBreakerRegistry();
		this.redis = new RedisTier(new StringRedisTemplate(builder.connectionFactory),
				breakers.circuitBreaker(CIRCUIT_BREAKER_NAME, builder.redisCircuitBreaker), this.metrics, builder.keyPrefix,
				() -> DefaultTieredCacheManager.this.failovers.onMoved()); // a slot moved: topology behind a failover
		this.stream = InvalidationStream.of(this.redis, builder.streamMaxLength);
		this.metrics.pendingEvictions(this.gate.pending()::size);
		this.factory = new CacheFactory(builder, breakers, this.redis, this.metrics, this.clock, this.instanceId,
				this.gate);
		this.dispatch = new InvalidationDispatch(this::coreOrNull, this.instanceId, this.metrics, this.clock);
		this.hotSet = new HotSetExchange(this.mode, builder.hotSet.validate("tiered-cache.hot-set"), this::cores,
				this.redis, this.metrics, this.clock);
		this.failovers = new FailoverGenerations(this::evictions, this.redis, this.stream, this.gate,
				() -> this.listener, this.instanceId, this.clock, this.metrics);
		this.retry = new PendingEvictionRetry(this.gate.pending(), this::evictions,
				(name) -> Optional.ofNullable(coreOrNull(name)).map(DefaultTieredCache::evictions).orElse(null),
				this.failovers::retryMove, builder.retryInterval);
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
		CacheFactory.requireValidName(name);
		CacheFactory.Registered<?, ?> cache = this.caches.computeIfAbsent(name, (key) -> this.factory.register(key, keyType, valueType));
		if (cache.core().keyType() != keyType || cache.core().valueType() != valueType) {
			throw new IllegalArgumentException("Cache '" + name + "' exists with keys of "
					+ cache.core().keyType().getName() + " and values of " + cache.core().valueType().getName()
					+ ", not " + keyType.getName() + " and " + valueType.getName());
		}
		return (TieredCache<K, V>) cache.decorated();
	}

	@Override
	public TieredCacheWarmup openWarmup() {
		return this.factory.openWarmup();
	}

	@Override
	public HotSetFill fillHotSet() {
		return this.hotSet.fill();
	}

	private Collection<DefaultTieredCache<?, ?>> cores() {
		return this.caches.values().stream().<DefaultTieredCache<?, ?>>map(CacheFactory.Registered::core).toList();
	}

	private @Nullable DefaultTieredCache<?, ?> coreOrNull(String name) {
		CacheFactory.Registered<?, ?> registered = this.caches.get(name);
		return (registered != null) ? registered.core() : null;
	}

	/** The evictions of the real caches created so far. */
	private List<CacheEvictions> evictions() {
		return this.caches.values().stream().map((cache) -> cache.core().evictions()).toList();
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
	 * The loader circuit breaker of cache {@code name} ({@code tiered-cache-loader-<name>}), unless it has none: its
	 * state says whether the database is considered available; its events let an application react (a pool's backoff).
	 */
	public Optional<CircuitBreaker> getLoaderCircuitBreaker(String name) {
		CacheFactory.requireValidName(name);
		return Optional.ofNullable(this.factory.loaderGuard(name).breaker());
	}

	/** The mode this manager serves. */
	public TieredCacheMode getMode() {
		return this.mode;
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
			this.listener = new InvalidationListener(client, this.stream.name(), this.blockTimeout,
					"tiered-cache-invalidations-" + this.instanceId, this.dispatch::onMessage, this.failovers::flush, newServer,
					this.metrics, this.gate, !(client instanceof RedisClusterClient));
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
		this.factory.stop();
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

	/**
	 * Whether this instance hears other instances' invalidations: its listener is connected, its thread alive, and it
	 * has read the stream since the stream's node last dropped a connection. While it does not, L1 serves nothing
	 * older than {@code tiered-cache.invalidation.max-silence}, after a disconnect nothing older than
	 * {@code disconnect-max-age}.
	 */
	public boolean isListening() {
		InvalidationListener listener = this.listener;
		return listener != null && listener.isConnected() && !this.gate.isDisconnected();
	}

	/**
	 * How long ago the change feed last confirmed that both tiers hold every change committed before then (ADR
	 * 0039), or {@code null} if it never has or none is followed. Past {@code change-feed-max-lag}, reads go to the
	 * loader.
	 */
	public @Nullable Duration getChangeFeedSilence() {
		return this.gate.feedSilence();
	}

	/** Appended to the stream after the feed's own invalidations, so that every instance applies those first. */
	@Override
	public boolean changeFeedCaughtUp(Duration lag, @Nullable String checkpoint) {
		return onTheFeedsNode(
				() -> this.stream.announceChangeFeed(this.instanceId, this.clock.millis(), lag.toNanos(), checkpoint));
	}

	@Override
	public boolean awaitChangeFeed(Predicate<String> covers, Duration timeout) throws InterruptedException {
		return this.gate.awaitFeed(covers, timeout);
	}

	@Override
	public ReadThrough readThrough() {
		return this.factory.readThrough();
	}

	@Override
	public @Nullable InMemoryOnly inMemoryOnly() {
		return (this.mode == TieredCacheMode.TIERED) ? this.factory.inMemoryOnly() : null;
	}

	@Override
	public @Nullable String changeFeedCheckpoint() {
		return onTheFeedsNode(this.stream::changeFeedCheckpoint);
	}

	@Override
	public boolean changeFeedLanded(@Nullable String previous, String checkpoint) {
		return onTheFeedsNode(() -> this.stream.moveChangeFeedCheckpoint(previous, checkpoint));
	}

	/** A change feed's call to the stream's node; its failure is the feed's to handle (retry or stall). */
	private static <T extends @Nullable Object> T onTheFeedsNode(Supplier<T> call) {
		try {
			return call.get();
		}
		catch (RedisUnavailableException ex) {
			throw new InvalidationFailedException(TieredCacheMetrics.ALL_CACHES, ex, false);
		}
	}

}
