package dev.concertcache.tiered.autoconfigure.redis;

import java.util.Locale;
import java.util.Properties;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Compares the {@link RedisConnectionBudget connection budget} with the server's {@code maxclients} once all beans
 * exist, and warns when the expected instances could take more than their share. The budget counts the shared
 * connection, the reactive one when Boot's Redis health indicator is the reactive kind, the dedicated connections
 * of {@code tiered-cache.redis.dedicated-connections}, and an enabled pool. It asks {@code CONFIG GET
 * maxclients}, then {@code INFO clients} (which also reports {@code maxclients}), over the shared connection, so it
 * opens no connection of its own; a server that refuses both is skipped with a debug message.
 * <p>
 * On Redis Cluster the budget is per node: each instance opens its shared, reactive, dedicated and pooled
 * connections to every node it sends commands to, at most one of each per node, so every node must take the whole
 * budget; the check reads each node's {@code maxclients} and compares with the smallest.
 * <p>
 * Redis being unreachable does not stop the application (the cache degrades to the database), but rejected
 * credentials do: they are a configuration error that no retry will fix. As a side effect the check opens the
 * shared connection before the first request needs it.
 */
public class RedisConnectionBudgetCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(RedisConnectionBudgetCheck.class);

	/**
	 * Attempts when the connection or a command times out. The first connection of a cold JVM loads Netty and
	 * Lettuce while its handshake runs against the command timeout (spring.data.redis.timeout): on a busy
	 * machine that can exceed 250 ms once, and then succeed. A shared connection left reconnecting by such a
	 * timeout rejects commands at once; it is reset, and the next attempt connects anew. Refusals and rejected
	 * credentials are not retried.
	 */
	private static final int ATTEMPTS = 3;

	private static final String REACTIVE_HEALTH_CONTRIBUTOR = "org.springframework.boot.health.contributor."
			+ "ReactiveHealthContributor";

	private final ListableBeanFactory beanFactory;

	private final TieredCacheRedisProperties properties;

	private final DataRedisProperties dataRedisProperties;

	private @Nullable RedisConnectionBudget budget;

	/** Whether the server is a cluster, each of whose nodes takes the whole budget. */
	private boolean perNode;

	public RedisConnectionBudgetCheck(ListableBeanFactory beanFactory, TieredCacheRedisProperties properties,
			DataRedisProperties dataRedisProperties) {
		this.beanFactory = beanFactory;
		this.properties = properties;
		this.dataRedisProperties = dataRedisProperties;
	}

	/** The budget the check compared, once it has run. */
	@Nullable RedisConnectionBudget budget() {
		return this.budget;
	}

	@Override
	public void afterSingletonsInstantiated() {
		RedisConnectionFactory factory = this.beanFactory.getBeanProvider(RedisConnectionFactory.class)
			.getIfUnique();
		if (factory == null) {
			return;
		}
		RedisConnectionBudget budget = RedisConnectionBudget.of(this.properties, this.dataRedisProperties,
				hasReactiveHealthIndicator(), getClass().getClassLoader());
		this.budget = budget;
		ServerClients server = null;
		for (int attempt = 1; server == null; attempt++) {
			try (RedisConnection connection = factory.getConnection()) {
				server = ServerClients.read(connection);
				this.perNode = connection instanceof RedisClusterConnection;
			}
			catch (RuntimeException ex) {
				if (attempt < ATTEMPTS && isTimeout(ex)) {
					logger.debug("Redis connection budget check timed out (" + rootMessage(ex) + "), trying again");
					continue;
				}
				if (attempt < ATTEMPTS && isReconnecting(ex) && factory instanceof LettuceConnectionFactory lettuce) {
					logger.debug("Redis connection budget check found the shared connection reconnecting ("
							+ rootMessage(ex) + "), connecting anew");
					lettuce.resetConnection();
					continue;
				}
				if (this.properties.getStartupCheck().isFailOnAuthenticationError() && isAuthenticationFailure(ex)) {
					throw new IllegalStateException("Redis rejected the configured credentials (" + rootMessage(ex)
							+ "): check spring.data.redis.username and spring.data.redis.password", ex);
				}
				logger.warn("Redis connection budget not checked, Redis is not reachable (" + rootMessage(ex)
						+ "); the cache serves from the local tier and the database until it is");
				logger.debug("Redis connection failure", ex);
				return;
			}
		}
		check(server, budget);
	}

	private boolean hasReactiveHealthIndicator() {
		if (!this.beanFactory.containsBean("redisHealthContributor")) {
			return false;
		}
		Class<?> type = this.beanFactory.getType("redisHealthContributor", false);
		return type != null && ClassUtils.isPresent(REACTIVE_HEALTH_CONTRIBUTOR, getClass().getClassLoader())
				&& ClassUtils.resolveClassName(REACTIVE_HEALTH_CONTRIBUTOR, getClass().getClassLoader())
					.isAssignableFrom(type);
	}

	private void check(ServerClients server, RedisConnectionBudget budget) {
		if (server.maxClients() == null) {
			logger.debug("Redis connection budget not checked: the server reports no maxclients to this client");
			return;
		}
		long maxClients = server.maxClients();
		double shareFraction = this.properties.getStartupCheck().getMaxClientsShare();
		long share = (long) Math.floor(maxClients * shareFraction);
		String limit = share + " (" + Math.round(shareFraction * 100) + "% of maxclients " + maxClients
				+ (this.perNode ? " of the tightest node, per node" : "") + ")";
		if (!budget.bounded()) {
			logger.warn("Redis connection budget is unbounded: spring.data.redis.lettuce.pool.max-active is negative"
					+ ", so instances can open any number of connections against a share of " + limit
					+ ". Set max-active, or disable the pool (ADR 0020).");
		}
		else if (budget.total() > share) {
			logger.warn("Redis connection budget exceeds the server's limit: " + budget.describe() + " > "
					+ limit + ". Raise maxclients (redis.conf and the file-descriptor limit of redis-server), or "
					+ "lower tiered-cache.redis.expected-instances, tiered-cache.redis.dedicated-connections or the "
					+ "pool size (ADR 0020).");
		}
		else {
			logger.info("Redis connection budget: " + budget.describe() + " <= " + limit);
		}
		if (server.connectedClients() != null && server.connectedClients() > share) {
			logger.warn("Redis already has " + server.connectedClients() + " connected clients, more than " + limit
					+ ": find who holds them with CLIENT LIST (ADR 0020).");
		}
	}

	static boolean isAuthenticationFailure(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			String message = (cause.getMessage() != null) ? cause.getMessage().toUpperCase(Locale.ROOT) : "";
			if (message.contains("WRONGPASS") || message.contains("NOAUTH") || message.contains("INVALID PASSWORD")
					|| message.contains("INVALID USERNAME-PASSWORD")) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	/**
	 * Whether Lettuce rejected the command because its connection is down and reconnecting (its disconnected
	 * behaviour REJECT_COMMANDS): a {@link RedisException} with no type of its own, told by its message.
	 */
	private static boolean isReconnecting(Throwable ex) {
		for (Throwable cause = ex; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
			if (cause instanceof RedisException
					&& String.valueOf(cause.getMessage()).startsWith("Currently not connected")) {
				return true;
			}
		}
		return false;
	}

	private static boolean isTimeout(Throwable ex) {
		for (Throwable cause = ex; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
			if (cause instanceof RedisCommandTimeoutException) {
				return true;
			}
		}
		return false;
	}

	static boolean isCommandError(Throwable ex) {
		for (Throwable cause = ex; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
			if (cause instanceof RedisCommandExecutionException) {
				return true;
			}
		}
		return false;
	}

	private static String rootMessage(Throwable ex) {
		Throwable root = ex;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return root.getClass().getSimpleName() + ": " + root.getMessage();
	}

	/** What the server says about its clients; {@code null} where it did not say. */
	record ServerClients(@Nullable Long maxClients, @Nullable Long connectedClients) {

		static ServerClients read(RedisConnection connection) {
			Long maxClients = null;
			try {
				maxClients = smallest(connection.serverCommands().getConfig("maxclients"), "maxclients");
			}
			catch (RuntimeException ex) {
				if (!isCommandError(ex)) {
					throw ex;
				}
				// Disabled with rename-command or denied by an ACL: INFO clients reports maxclients too.
				logger.debug("CONFIG GET maxclients refused (" + rootMessage(ex) + "), trying INFO clients");
			}
			Long connectedClients = null;
			try {
				Properties info = connection.serverCommands().info("clients");
				if (maxClients == null) {
					maxClients = smallest(info, "maxclients");
				}
				connectedClients = largest(info, "connected_clients");
			}
			catch (RuntimeException ex) {
				if (!isCommandError(ex)) {
					throw ex;
				}
				logger.debug("INFO clients refused (" + rootMessage(ex) + ")");
			}
			return new ServerClients(maxClients, connectedClients);
		}

		// A cluster connection reports one entry per node ("host:port.maxclients"); the tightest node decides.
		private static @Nullable Long smallest(@Nullable Properties properties, String name) {
			return extreme(properties, name, true);
		}

		private static @Nullable Long largest(@Nullable Properties properties, String name) {
			return extreme(properties, name, false);
		}

		private static @Nullable Long extreme(@Nullable Properties properties, String name, boolean smallest) {
			if (properties == null) {
				return null;
			}
			Long result = null;
			for (String key : properties.stringPropertyNames()) {
				if (key.equals(name) || key.endsWith("." + name)) {
					try {
						long value = Long.parseLong(properties.getProperty(key).trim());
						if (result == null || (smallest ? value < result : value > result)) {
							result = value;
						}
					}
					catch (NumberFormatException ex) {
						// Not a number: ignore this entry.
					}
				}
			}
			return result;
		}

	}

}
