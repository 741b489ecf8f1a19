package dev.concertcache.tiered.log;

import java.time.Duration;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.StatefulRedisConnectionImpl;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import org.jspecify.annotations.Nullable;

/**
 * The invalidation listener's own connection (ADR 0039): opened again once closed, named in {@code CLIENT LIST}, with a
 * timeout that outlasts a blocking read. On a cluster it also holds the connection to the primary serving the
 * stream's slot now, whose disconnect means the stream may be out of reach and whose {@code run_id} tells a failover.
 */
final class StreamConnection {

	private final AbstractRedisClient client;

	private final String stream;

	private final Duration timeout;

	private final String clientName;

	private volatile @Nullable StatefulConnection<String, String> connection;

	private @Nullable RedisClusterCommands<String, String> commands;

	/** On a cluster, the connection to the stream's primary. */
	private volatile @Nullable StatefulConnection<String, String> primary;

	private @Nullable String primaryId;

	StreamConnection(AbstractRedisClient client, String stream, Duration timeout, String clientName) {
		this.client = client;
		this.stream = stream;
		this.timeout = timeout;
		this.clientName = clientName;
	}

	/**
	 * The commands of the open connection, opened again if it was closed; on a cluster, the stream's primary
	 * followed.
	 */
	RedisClusterCommands<String, String> commands() {
		StatefulConnection<String, String> connection = this.connection;
		if (connection == null || !connection.isOpen()) {
			if (connection != null) {
				// Its auto-reconnect would bring it back beside the new one: a connection leaked per drop.
				connection.closeAsync();
			}
			if (this.client instanceof RedisClusterClient cluster) {
				StatefulRedisClusterConnection<String, String> clustered = cluster.connect(StringCodec.UTF8);
				this.commands = clustered.sync();
				connection = clustered;
			}
			else {
				StatefulRedisConnection<String, String> standalone = ((RedisClient) this.client)
					.connect(StringCodec.UTF8);
				this.commands = standalone.sync();
				connection = standalone;
				// Named in CLIENT LIST through Lettuce's connection, which keeps the name for the handshake of each
				// reconnect it makes by itself (a plain CLIENT SETNAME is gone after the first one). RedisClient's
				// connect returns this type for standalone and Sentinel alike.
				((StatefulRedisConnectionImpl<String, String>) standalone).setClientName(this.clientName);
			}
			connection.setTimeout(this.timeout);
			this.primaryId = null;
			this.connection = connection;
		}
		if (connection instanceof StatefulRedisClusterConnection<String, String> cluster) {
			RedisClusterNode primary = streamPrimary(cluster);
			if (!primary.getNodeId().equals(this.primaryId)) {
				this.primary = cluster.getConnection(primary.getNodeId());
				this.primaryId = primary.getNodeId();
			}
		}
		return this.commands;
	}

	/** Whether {@code connection} is this one (on a cluster: the cluster connection, not one of its nodes'). */
	boolean is(RedisChannelHandler<?, ?> connection) {
		return connection == this.connection;
	}

	/**
	 * Whether a disconnect of {@code connection} may be the stream's: on a standalone or Sentinel client any data
	 * connection's, on a cluster only the stream primary's (the topology refresh connects to every node and closes the
	 * connection again each time).
	 */
	boolean mayCarryTheStream(RedisChannelHandler<?, ?> connection) {
		return !(this.client instanceof RedisClusterClient) || connection == this.primary;
	}

	/**
	 * The {@code run_id} of the server that holds the stream: on a cluster, of the node serving its slot now (a
	 * replica promoted in a failover has another one, as a restarted server has).
	 */
	String runId(RedisClusterCommands<String, String> redis) {
		String info = (this.connection instanceof StatefulRedisClusterConnection<String, String> cluster)
				? cluster.getConnection(streamPrimary(cluster).getNodeId()).sync().info("server")
				: redis.info("server");
		for (String line : info.split("\r?\n")) {
			if (line.startsWith("run_id:")) {
				return line.substring("run_id:".length()).trim();
			}
		}
		return "";
	}

	void close() {
		StatefulConnection<String, String> connection = this.connection;
		if (connection != null) {
			connection.closeAsync();
		}
	}

	private RedisClusterNode streamPrimary(StatefulRedisClusterConnection<String, String> cluster) {
		RedisClusterNode node = cluster.getPartitions().getMasterBySlot(SlotHash.getSlot(this.stream));
		if (node == null) {
			throw new IllegalStateException("No node serves the slot of " + this.stream);
		}
		return node;
	}

}
