package dev.concertcache.tiered.autoconfigure.redis;

import java.time.Duration;

import io.lettuce.core.ClientOptions.DisconnectedBehavior;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Lettuce client settings and connection budget of the cache tier. Settings Spring Boot already has are not repeated
 * here: the command timeout, connect timeout, client name and pool stay under {@code spring.data.redis.*}. Why each
 * default: ADR 0020.
 */
@ConfigurationProperties("tiered-cache.redis")
public class TieredCacheRedisProperties {

	/** Default of {@link #getDisconnectedBehavior()}: fail a command at once while there is no connection. */
	public static final DisconnectedBehavior DEFAULT_DISCONNECTED_BEHAVIOR = DisconnectedBehavior.REJECT_COMMANDS;

	/**
	 * Default of {@link #getRequestQueueSize()}: twice the 1000 concurrent users of the load scenario, each with at
	 * most one command in flight on the shared connection.
	 */
	public static final int DEFAULT_REQUEST_QUEUE_SIZE = 2048;

	/** Default of {@link #getExpectedInstances()}. */
	public static final int DEFAULT_EXPECTED_INSTANCES = 1;

	/** Default of {@link #getDedicatedConnections()}: the invalidation-stream reader. */
	public static final int DEFAULT_DEDICATED_CONNECTIONS = 1;

	/**
	 * Connection to Redis that every instance holds in any case: Lettuce multiplexes all regular commands over it.
	 */
	public static final int SHARED_CONNECTIONS = 1;

	/**
	 * Behaviour of the client while its connection is down. REJECT_COMMANDS fails each command immediately, so a
	 * request falls through to the database instead of waiting for a reconnect; DEFAULT and ACCEPT_COMMANDS queue
	 * commands until they time out.
	 */
	private DisconnectedBehavior disconnectedBehavior = DEFAULT_DISCONNECTED_BEHAVIOR;

	/**
	 * Maximum number of commands queued on one connection, in flight or waiting to be written. Beyond it a command
	 * fails at once instead of adding to the backlog.
	 */
	private int requestQueueSize = DEFAULT_REQUEST_QUEUE_SIZE;

	/**
	 * Whether to reconnect automatically after the connection is lost.
	 */
	private boolean autoReconnect = true;

	/**
	 * Number of application instances expected to share the Redis server. The start-up check multiplies the
	 * connections of one instance by it.
	 */
	private int expectedInstances = DEFAULT_EXPECTED_INSTANCES;

	/**
	 * Number of connections each instance holds besides the shared command connection: one per blocking reader
	 * (the invalidation stream) or Pub/Sub subscriber.
	 */
	private int dedicatedConnections = DEFAULT_DEDICATED_CONNECTIONS;

	private final KeepAlive keepAlive = new KeepAlive();

	private final Cluster cluster = new Cluster();

	private final StartupCheck startupCheck = new StartupCheck();

	public DisconnectedBehavior getDisconnectedBehavior() {
		return this.disconnectedBehavior;
	}

	public void setDisconnectedBehavior(DisconnectedBehavior disconnectedBehavior) {
		this.disconnectedBehavior = disconnectedBehavior;
	}

	public int getRequestQueueSize() {
		return this.requestQueueSize;
	}

	public void setRequestQueueSize(int requestQueueSize) {
		this.requestQueueSize = requestQueueSize;
	}

	public boolean isAutoReconnect() {
		return this.autoReconnect;
	}

	public void setAutoReconnect(boolean autoReconnect) {
		this.autoReconnect = autoReconnect;
	}

	public int getExpectedInstances() {
		return this.expectedInstances;
	}

	public void setExpectedInstances(int expectedInstances) {
		this.expectedInstances = expectedInstances;
	}

	public int getDedicatedConnections() {
		return this.dedicatedConnections;
	}

	public void setDedicatedConnections(int dedicatedConnections) {
		this.dedicatedConnections = dedicatedConnections;
	}

	public KeepAlive getKeepAlive() {
		return this.keepAlive;
	}

	public Cluster getCluster() {
		return this.cluster;
	}

	public StartupCheck getStartupCheck() {
		return this.startupCheck;
	}

	/**
	 * TCP keepalive of the client's sockets, which finds a dead server on an idle connection (a crashed host sends
	 * no RST). Idle, interval and count need Linux or Windows (epoll, io_uring, or NIO on Java 11+); elsewhere only
	 * SO_KEEPALIVE is set and the operating system's timers apply.
	 */
	public static class KeepAlive {

		/** Default of {@link #getIdle()}. */
		public static final Duration DEFAULT_IDLE = Duration.ofSeconds(10);

		/** Default of {@link #getInterval()}. */
		public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(5);

		/** Default of {@link #getCount()}. */
		public static final int DEFAULT_COUNT = 3;

		/**
		 * Whether to enable TCP keepalive.
		 */
		private boolean enabled = true;

		/**
		 * Idle time before the first probe, in whole seconds.
		 */
		private Duration idle = DEFAULT_IDLE;

		/**
		 * Time between unanswered probes, in whole seconds.
		 */
		private Duration interval = DEFAULT_INTERVAL;

		/**
		 * Number of unanswered probes after which the connection is considered dead.
		 */
		private int count = DEFAULT_COUNT;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getIdle() {
			return this.idle;
		}

		public void setIdle(Duration idle) {
			this.idle = idle;
		}

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public int getCount() {
			return this.count;
		}

		public void setCount(int count) {
			this.count = count;
		}

	}

	/**
	 * Redis Cluster topology handling, applied only when {@code spring.data.redis.cluster.nodes} is set. The periodic
	 * refresh and dynamic refresh sources stay under {@code spring.data.redis.lettuce.cluster.refresh.*}. Defaults
	 * other than the refresh timeout are Lettuce's (written as literals so that they appear in the configuration
	 * metadata). No MOVED/ASK redirect is followed, whatever {@code spring.data.redis.cluster.max-redirects} says
	 * (ADR 0039, "Client").
	 */
	public static class Cluster {

		/**
		 * Default of {@link #getAdaptiveRefreshTimeout()}: the first refresh after a primary dies comes before its
		 * replica is promoted (Redis waits cluster-node-timeout); the next one, this much later, finds the new
		 * primary (ADR 0039, "Client").
		 */
		public static final Duration DEFAULT_ADAPTIVE_REFRESH_TIMEOUT = Duration.ofSeconds(2);

		/** Default of {@link #getRefreshPeriod()}. */
		public static final Duration DEFAULT_REFRESH_PERIOD = Duration.ofSeconds(10);

		/**
		 * Minimum time between two topology refreshes triggered by MOVED/ASK redirects, reconnects or unknown nodes.
		 * Every refresh opens a short-lived connection to each node, so this also bounds connection churn during
		 * resharding.
		 */
		private Duration adaptiveRefreshTimeout = DEFAULT_ADAPTIVE_REFRESH_TIMEOUT;

		/**
		 * Interval of the periodic topology refresh when spring.data.redis.lettuce.cluster.refresh.period is not
		 * set: the bound on noticing a failover that no command of this instance ran into.
		 */
		private Duration refreshPeriod = DEFAULT_REFRESH_PERIOD;

		/**
		 * Number of failed reconnect attempts after which a topology refresh is triggered.
		 */
		private int refreshTriggersReconnectAttempts = 5;

		public Duration getAdaptiveRefreshTimeout() {
			return this.adaptiveRefreshTimeout;
		}

		public void setAdaptiveRefreshTimeout(Duration adaptiveRefreshTimeout) {
			this.adaptiveRefreshTimeout = adaptiveRefreshTimeout;
		}

		public Duration getRefreshPeriod() {
			return this.refreshPeriod;
		}

		public void setRefreshPeriod(Duration refreshPeriod) {
			this.refreshPeriod = refreshPeriod;
		}

		public int getRefreshTriggersReconnectAttempts() {
			return this.refreshTriggersReconnectAttempts;
		}

		public void setRefreshTriggersReconnectAttempts(int refreshTriggersReconnectAttempts) {
			this.refreshTriggersReconnectAttempts = refreshTriggersReconnectAttempts;
		}

	}

	/**
	 * Start-up checks: the connection budget against the server's {@code maxclients}, and a persistence that
	 * cannot bring back an earlier state.
	 */
	public static class StartupCheck {

		/** Default of {@link #getMaxClientsShare()}. */
		public static final double DEFAULT_MAX_CLIENTS_SHARE = 0.8;

		/**
		 * Whether to compare the connection budget with the server's maxclients, and refuse a server whose restart
		 * could bring back an earlier state, at start-up.
		 */
		private boolean enabled = true;

		/**
		 * Fraction of the server's maxclients the instances may use together; the rest is left for redis-cli,
		 * exporters, replicas and reconnect overlap.
		 */
		private double maxClientsShare = DEFAULT_MAX_CLIENTS_SHARE;

		/**
		 * Whether rejected credentials (WRONGPASS, NOAUTH) stop the application from starting. Other connection
		 * failures only log a warning: the cache degrades to the database.
		 */
		private boolean failOnAuthenticationError = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public double getMaxClientsShare() {
			return this.maxClientsShare;
		}

		public void setMaxClientsShare(double maxClientsShare) {
			this.maxClientsShare = maxClientsShare;
		}

		public boolean isFailOnAuthenticationError() {
			return this.failOnAuthenticationError;
		}

		public void setFailOnAuthenticationError(boolean failOnAuthenticationError) {
			this.failOnAuthenticationError = failOnAuthenticationError;
		}

	}

}
