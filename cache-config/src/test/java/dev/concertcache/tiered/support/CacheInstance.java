package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import com.github.benmanes.caffeine.cache.Ticker;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.ReadFrom;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.concertcache.testsupport.CommandTrap;
import dev.concertcache.testsupport.Meters;
import dev.concertcache.testsupport.RedisCluster;
import dev.concertcache.testsupport.RedisSentinel;
import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheMode;

import static org.awaitility.Awaitility.await;

/**
 * One application instance of the cache for tests: its own Redis connections, meters, fake ticker and manager,
 * over a real Redis. Settings as the service runs them: a 250 ms command timeout and commands rejected while
 * disconnected.
 */
final class CacheInstance implements AutoCloseable {

	final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	/** Long: on a shared 2-core machine a listener can stall for a while; tests of the silence bound set it. */
	static final Duration MAX_SILENCE = Duration.ofMinutes(1);

	final FakeTicker ticker = new FakeTicker();

	final FakeClock clock = new FakeClock();

	/** Refresh-ahead reads, held until a test runs them: no test sees one it did not ask for. */
	final HeldTasks refreshes = new HeldTasks();

	/** The time source of the invalidation watermark (how long ago this instance heard every invalidation). */
	final FakeTicker watermark = new FakeTicker();

	final LettuceConnectionFactory factory;

	final DefaultTieredCacheManager manager;

	final StringRedisTemplate redis;

	/** The prefix of every Redis key this instance writes. */
	final String keyPrefix;

	/** Parks this instance's threads before the commands a test names (see {@link CommandTrap}). */
	final CommandTrap commands = new CommandTrap();

	private final ClientResources resources;

	private CacheInstance(RedisServer server, Settings properties, ClientResources resources,
			boolean awaitListener) {
		this(connect(server, resources), properties, resources, true, awaitListener);
	}

	private CacheInstance(LettuceConnectionFactory factory, Settings properties, ClientResources resources,
			boolean awaitListener) {
		this(factory, properties, resources, true, awaitListener);
	}

	private CacheInstance(LettuceConnectionFactory factory, Settings properties, ClientResources resources,
			boolean start, boolean awaitListener) {
		this.resources = resources;
		this.factory = factory;
		// Before the manager's and the template's connections: Lettuce gives a connection the listeners its client
		// has when it connects.
		((AbstractRedisClient) factory.getNativeClient()).addListener(this.commands);
		this.keyPrefix = properties.keyPrefix();
		this.redis = new StringRedisTemplate(this.factory);
		TieredCacheManagerBuilder builder = DefaultTieredCacheManager.builder(this.factory);
		properties.customizer.accept(builder);
		this.manager = builder.meterRegistry(this.meters)
			.refresher(this.refreshes)
			.ticker(this.ticker)
			.clock(this.clock)
			.watermarkTicker(this.watermark)
			.build();
		if (start) {
			this.manager.start();
		}
		if (start && awaitListener) {
			// Generous: the integration tier runs three such JVMs beside Redis servers on two cores.
			await().atMost(Duration.ofSeconds(10)).until(this.manager::isListening);
		}
	}

	static CacheInstance start(RedisServer server, Settings properties) {
		return new CacheInstance(server, properties, DefaultClientResources.create(), true);
	}

	/**
	 * Builds the instance without starting its manager: its caches read and load, but nothing listens to the stream
	 * until the test calls {@code manager.start()}.
	 */
	static CacheInstance notStarted(RedisServer server, Settings properties) {
		ClientResources resources = DefaultClientResources.create();
		return new CacheInstance(connect(server, resources), properties, resources, false, false);
	}

	/** Starts without waiting for the invalidation listener to connect: Redis may be down. */
	static CacheInstance startWithoutWaiting(RedisServer server, Settings properties) {
		return new CacheInstance(server, properties, DefaultClientResources.create(), false);
	}

	/**
	 * An instance on Redis Cluster, its client set as the auto-configuration sets it (reads from primaries, no
	 * redirect followed, periodic and adaptive topology refresh), with short refresh intervals so that a test sees
	 * a failover soon.
	 */
	static CacheInstance start(RedisCluster cluster, Settings properties) {
		return start(cluster, properties, DefaultClientResources.create());
	}

	/** {@link #start(RedisCluster, Settings)} on {@code resources} (its event bus, for example). */
	static CacheInstance start(RedisCluster cluster, Settings properties, ClientResources resources) {
		return start(cluster, properties, resources, Duration.ofSeconds(1));
	}

	/**
	 * {@link #start(RedisCluster, Settings, ClientResources)} with a periodic topology refresh every
	 * {@code refreshPeriod}: a long one leaves the instance's topology behind a failover nothing it ran into told it
	 * of.
	 */
	static CacheInstance start(RedisCluster cluster, Settings properties, ClientResources resources,
			Duration refreshPeriod) {
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			// Topology refreshes connect with this timeout too: 6 nodes and 2 JVMs share 2 cores in CI.
			.commandTimeout(Duration.ofSeconds(2))
			.clientResources(resources)
			.readFrom(ReadFrom.UPSTREAM)
			.clientOptions(ClusterClientOptions.builder()
				.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
				.timeoutOptions(TimeoutOptions.enabled())
				.maxRedirects(0)
				.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
					.enablePeriodicRefresh(refreshPeriod)
					.enableAllAdaptiveRefreshTriggers()
					.adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1))
					.closeStaleConnections(true)
					.build())
				.build())
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(List.of(cluster.nodesProperty().split(","))), client);
		factory.afterPropertiesSet();
		factory.start();
		return new CacheInstance(factory, properties, resources, false).awaitListening(Duration.ofSeconds(20));
	}

	/**
	 * An instance on a primary a Sentinel watches, its client set as for a standalone server but for a 1 s timeout
	 * (the Sentinel is asked for the primary within it, on a loaded machine) and a constant 100 ms reconnect delay:
	 * Lettuce's default doubles up to 30 s, so after a failover each connection would come back whenever its own
	 * backoff ends.
	 */
	static CacheInstance start(RedisSentinel sentinel, Settings properties) {
		ClientResources resources = DefaultClientResources.builder()
			.reconnectDelay(Delay.constant(Duration.ofMillis(100)))
			.build();
		RedisSentinelConfiguration configuration = new RedisSentinelConfiguration(RedisSentinel.MASTER_NAME,
				Set.of(sentinel.sentinelAddress()));
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				client(resources, Duration.ofSeconds(1)));
		factory.afterPropertiesSet();
		factory.start();
		return new CacheInstance(factory, properties, resources, true);
	}

	private CacheInstance awaitListening(Duration timeout) {
		await().atMost(timeout).until(this.manager::isListening);
		return this;
	}

	static CacheInstance start(RedisServer server, Settings properties, ClientResources resources) {
		return new CacheInstance(server, properties, resources, true);
	}

	/** An instance whose every command to Redis {@code commands} logs. */
	static CacheInstance start(RedisServer server, Settings properties, CommandLog commands) {
		ClientResources resources = DefaultClientResources.create();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()), client(resources, Duration.ofMillis(250)));
		factory.afterPropertiesSet();
		// Before the first connection: Lettuce gives a connection the listeners its client has when it connects.
		((AbstractRedisClient) factory.getNativeClient()).addListener(commands);
		factory.start();
		return new CacheInstance(factory, properties, resources, true);
	}

	/** TIERED mode under a key prefix of its own, so that tests sharing one Redis never meet. */
	static Settings properties(Consumer<TieredCacheManagerBuilder> customizer) {
		String keyPrefix = "test-" + UUID.randomUUID().toString().substring(0, 8);
		return new Settings(keyPrefix, (builder) -> builder.mode(TieredCacheMode.TIERED)
			.keyPrefix(keyPrefix)
			.lockPollInterval(Duration.ofMillis(5))
			.blockTimeout(Duration.ofMillis(500))
			.maxSilence(MAX_SILENCE)
			.retryInterval(Duration.ofMillis(100))).and(customizer);
	}

	static Settings properties() {
		return properties((builder) -> {
		});
	}

	/** The settings of a test instance: its key prefix and what the test sets on the manager's builder. */
	record Settings(String keyPrefix, Consumer<TieredCacheManagerBuilder> customizer) {

		Settings and(Consumer<TieredCacheManagerBuilder> more) {
			return new Settings(this.keyPrefix, this.customizer.andThen(more));
		}

		String getKeyPrefix() {
			return this.keyPrefix;
		}

	}

	<K, V> CacheUnderTest<K, V> cache(String name, Class<K> keyType, Class<V> valueType) {
		TieredCache<K, V> cache = this.manager.getCache(name, keyType, valueType);
		return new CacheUnderTest<>(cache, ManagerInternals.core(this.manager, name));
	}

	/** How many failovers (or new primaries) this instance has moved its generations for. */
	long failoversHandled() {
		return (long) count("tiered.cache.failovers");
	}

	/** The count of the counter or function counter {@code name} with {@code tags}. */
	double count(String name, String... tags) {
		return Meters.count(this.meters, name, tags);
	}

	double gets(String cache, String tier, String result) {
		return count("tiered.cache.gets", "cache", cache, "tier", tier, "result", result);
	}

	long loads(String cache) {
		return this.meters.find("tiered.cache.loads").tag("cache", cache).timers().stream()
			.mapToLong((timer) -> timer.count())
			.sum();
	}

	@Override
	public void close() {
		this.manager.stop();
		this.factory.destroy();
		this.resources.shutdown();
	}

	static LettuceConnectionFactory connect(RedisServer server, ClientResources resources) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()), client(resources, Duration.ofMillis(250)));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static LettuceClientConfiguration client(ClientResources resources, Duration timeout) {
		return LettuceClientConfiguration.builder()
			.commandTimeout(timeout)
			.clientResources(resources)
			.clientOptions(ClientOptions.builder()
				.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
				.timeoutOptions(TimeoutOptions.enabled())
				.build())
			.build();
	}

	/**
	 * The wall clock of Redis freshness ({@code "f"} in the envelope) and invalidation send times: system time
	 * plus however far a test has moved it.
	 */
	static final class FakeClock extends java.time.Clock {

		private final AtomicLong offset = new AtomicLong();

		@Override
		public java.time.ZoneId getZone() {
			return java.time.ZoneOffset.UTC;
		}

		@Override
		public java.time.Clock withZone(java.time.ZoneId zone) {
			throw new UnsupportedOperationException();
		}

		@Override
		public long millis() {
			return System.currentTimeMillis() + this.offset.get();
		}

		@Override
		public java.time.Instant instant() {
			return java.time.Instant.ofEpochMilli(millis());
		}

		void advance(Duration duration) {
			this.offset.addAndGet(duration.toMillis());
		}

	}

	/** An executor that holds its tasks until {@link #runAll} runs them on the caller's thread. */
	static final class HeldTasks implements java.util.concurrent.Executor {

		private final java.util.Queue<Runnable> tasks = new java.util.concurrent.ConcurrentLinkedQueue<>();

		@Override
		public void execute(Runnable task) {
			this.tasks.add(task);
		}

		int size() {
			return this.tasks.size();
		}

		/** Runs every task held now and returns how many. */
		int runAll() {
			int ran = 0;
			for (Runnable task = this.tasks.poll(); task != null; task = this.tasks.poll()) {
				task.run();
				ran++;
			}
			return ran;
		}

	}

	/** A Caffeine ticker that moves only when told. */
	static final class FakeTicker implements Ticker {

		private final AtomicLong nanos = new AtomicLong();

		@Override
		public long read() {
			return this.nanos.get();
		}

		void advance(Duration duration) {
			this.nanos.addAndGet(duration.toNanos());
		}

	}

}
