package dev.concertcache.tiered.autoconfigure.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Refuses to start on a Redis that can come back from a restart holding an earlier state than it acknowledged
 * (ADR 0100). A server restarted from an RDB snapshot, or from an append-only file synced once a second, has lost
 * the tombstones and generation moves written since, but not the values they replaced, and keeps its {@code run_id}
 * on no node and its node id on a cluster: old values would be served until their time to live. A server that comes
 * back empty loses nothing (the values go with their tombstones), and one whose append-only file is synced before
 * every reply ({@code appendfsync always}) loses nothing either; every node must be one of the two.
 * <p>
 * It asks {@code CONFIG GET} on every node over the shared connection. An unreachable Redis is left to the
 * connection budget check's warning; a server that refuses {@code CONFIG} is reported in a warning, since managed
 * services disable it.
 */
public class RedisPersistenceCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(RedisPersistenceCheck.class);

	private final ObjectProvider<RedisConnectionFactory> connectionFactory;

	public RedisPersistenceCheck(ObjectProvider<RedisConnectionFactory> connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		RedisConnectionFactory factory = this.connectionFactory.getIfUnique();
		if (factory == null) {
			return;
		}
		Map<String, Persistence> nodes;
		try (RedisConnection connection = factory.getConnection()) {
			nodes = Persistence.read(connection);
		}
		catch (RuntimeException ex) {
			if (RedisConnectionBudgetCheck.isCommandError(ex)) {
				logger.warn("Redis persistence not checked, CONFIG GET is refused (" + ex.getMessage() + "): every "
						+ "node must run without persistence or with appendfsync always (ADR 0100)");
			}
			return;
		}
		List<String> unsafe = new ArrayList<>();
		nodes.forEach((node, persistence) -> {
			String reason = persistence.restoresAnEarlierState();
			if (reason != null) {
				unsafe.add(node.isEmpty() ? reason : node + ": " + reason);
			}
		});
		if (!unsafe.isEmpty()) {
			throw new IllegalStateException("Redis can restart with an earlier state than it acknowledged, which "
					+ "would bring back values whose tombstones it lost (" + String.join("; ", unsafe) + "). Run it "
					+ "without persistence (save \"\", appendonly no, as redis/redis.conf does) or with appendonly "
					+ "yes and appendfsync always (ADR 0100)");
		}
	}

	/** One node's persistence settings, as {@code CONFIG GET} reports them. */
	record Persistence(String save, String appendOnly, String appendFsync) {

		/**
		 * Each node's settings, by its {@code host:port} on a cluster, under {@code ""} on a standalone server.
		 */
		static Map<String, Persistence> read(RedisConnection connection) {
			Properties save = connection.serverCommands().getConfig("save");
			Properties appendOnly = connection.serverCommands().getConfig("appendonly");
			Properties appendFsync = connection.serverCommands().getConfig("appendfsync");
			Map<String, Persistence> nodes = new TreeMap<>();
			for (String key : save.stringPropertyNames()) {
				// A cluster connection prefixes each node's entry with "host:port.".
				String node = key.equals("save") ? "" : key.substring(0, key.length() - ".save".length());
				String prefix = node.isEmpty() ? "" : node + ".";
				nodes.put(node, new Persistence(save.getProperty(key).trim(),
						appendOnly.getProperty(prefix + "appendonly", "no").trim(),
						appendFsync.getProperty(prefix + "appendfsync", "everysec").trim()));
			}
			return nodes;
		}

		/** Why a restart can bring back an earlier state, or {@code null} if it cannot. */
		String restoresAnEarlierState() {
			if ("yes".equalsIgnoreCase(this.appendOnly)) {
				// A restart loads the append-only file, not the snapshot.
				return "always".equalsIgnoreCase(this.appendFsync) ? null
						: "appendonly yes with appendfsync " + this.appendFsync;
			}
			return this.save.isEmpty() ? null : "RDB snapshots (save \"" + this.save + "\")";
		}

	}

}
