package dev.concertcache.tiered.redis;

import java.util.Locale;
import java.util.Properties;

import io.lettuce.core.RedisCommandExecutionException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Compares the {@link RedisConnectionBudget connection budget} with the server's {@code maxclients} once all beans
 * exist, and warns when the expected instances could take more than their share. It asks {@code CONFIG GET
 * maxclients}, then {@code INFO clients} (which also reports {@code maxclients}), over the shared connection, so it
 * opens no connection of its own; a server that refuses both is skipped with a debug message.
 * <p>
 * Redis being unreachable does not stop the application (the cache degrades to the database), but rejected
 * credentials do: they are a configuration error that no retry will fix.
 */
public class RedisConnectionBudgetCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(RedisConnectionBudgetCheck.class);

	private final ObjectProvider<RedisConnectionFactory> connectionFactory;

	private final RedisConnectionBudget budget;

	private final TieredCacheRedisProperties.StartupCheck properties;

	public RedisConnectionBudgetCheck(ObjectProvider<RedisConnectionFactory> connectionFactory,
			RedisConnectionBudget budget, TieredCacheRedisProperties.StartupCheck properties) {
		this.connectionFactory = connectionFactory;
		this.budget = budget;
		this.properties = properties;
	}

	@Override
	public void afterSingletonsInstantiated() {
		RedisConnectionFactory factory = this.connectionFactory.getIfUnique();
		if (factory == null) {
			return;
		}
		ServerClients server;
		try (RedisConnection connection = factory.getConnection()) {
			server = ServerClients.read(connection);
		}
		catch (RuntimeException ex) {
			if (this.properties.isFailOnAuthenticationError() && isAuthenticationFailure(ex)) {
				throw new IllegalStateException("Redis rejected the configured credentials (" + rootMessage(ex)
						+ "): check spring.data.redis.username and spring.data.redis.password", ex);
			}
			logger.warn("Redis connection budget not checked, Redis is not reachable (" + rootMessage(ex)
					+ "); the cache serves from the local tier and the database until it is");
			logger.debug("Redis connection failure", ex);
			return;
		}
		check(server);
	}

	private void check(ServerClients server) {
		if (server.maxClients() == null) {
			logger.debug("Redis connection budget not checked: the server reports no maxclients to this client");
			return;
		}
		long maxClients = server.maxClients();
		long share = (long) Math.floor(maxClients * this.properties.getMaxClientsShare());
		String limit = share + " (" + Math.round(this.properties.getMaxClientsShare() * 100) + "% of maxclients "
				+ maxClients + ")";
		if (!this.budget.bounded()) {
			logger.warn("Redis connection budget is unbounded: spring.data.redis.lettuce.pool.max-active is negative"
					+ ", so instances can open any number of connections against a share of " + limit
					+ ". Set max-active, or disable the pool (ADR-0020).");
		}
		else if (this.budget.total() > share) {
			logger.warn("Redis connection budget exceeds the server's limit: " + this.budget.describe() + " > "
					+ limit + ". Raise maxclients (redis.conf and the file-descriptor limit of redis-server), or "
					+ "lower tiered-cache.redis.expected-instances, tiered-cache.redis.dedicated-connections or the "
					+ "pool size (ADR-0020).");
		}
		else {
			logger.info("Redis connection budget: " + this.budget.describe() + " <= " + limit);
		}
		if (server.connectedClients() != null && server.connectedClients() > share) {
			logger.warn("Redis already has " + server.connectedClients() + " connected clients, more than " + limit
					+ ": find who holds them with CLIENT LIST (ADR-0020).");
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

	private static boolean isCommandError(Throwable ex) {
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
