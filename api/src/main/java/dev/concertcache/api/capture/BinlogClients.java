package dev.concertcache.api.capture;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.network.ServerException;

/**
 * Opens replication connections to the server, and checks before the capture starts that it can: the server's
 * settings, the grant, and a first event read within the connect timeout.
 */
final class BinlogClients {

	private final BinlogServer server;

	private final CaptureProperties properties;

	BinlogClients(BinlogServer server, CaptureProperties properties) {
		this.server = server;
		this.properties = properties;
	}

	/** A client that reads from {@code position} as replica {@code serverId}; not connected yet. */
	BinaryLogClient client(BinlogPosition position, long serverId) {
		BinaryLogClient client = new BinaryLogClient(this.server.host(), this.server.port(), this.server.username(),
				this.server.password());
		client.setServerId(serverId);
		client.setSSLMode(this.server.sslMode());
		// The capture's own loop reconnects, always from the checkpoint, never from the client's in-memory one.
		client.setKeepAlive(false);
		client.setConnectTimeout(this.properties.getConnectTimeout().toMillis());
		// The server sends a heartbeat when idle, so that a silently dead connection is noticed.
		client.setHeartbeatInterval(this.properties.getConnectTimeout().toMillis() / 2);
		position.applyTo(client);
		return client;
	}

	/** What keeps the capture from reading the server's binary log; empty if nothing does. */
	List<String> startupProblems() {
		List<String> problems = this.server.problems();
		if (!problems.isEmpty()) {
			return problems;
		}
		try {
			tryReplicationConnection();
			return List.of();
		}
		catch (ServerException ex) {
			return List.of("the replication connection was refused (" + ex.getMessage() + "): run "
					+ this.server.replicationGrant());
		}
		catch (Exception ex) {
			return List.of("the replication connection failed: " + ex);
		}
	}

	/** Opens a replication connection at the current position and waits for its first event. */
	private void tryReplicationConnection() throws Exception {
		// An id of its own: the server drops an older connection that shares the reader's id.
		BinaryLogClient probe = client(this.server.currentPosition(), CaptureConfiguration.randomServerId());
		CompletableFuture<Exception> outcome = new CompletableFuture<>();
		probe.registerEventListener((event) -> outcome.complete(null));
		probe.registerLifecycleListener(new BinaryLogClient.AbstractLifecycleListener() {
			@Override
			public void onCommunicationFailure(BinaryLogClient client, Exception ex) {
				outcome.complete(ex);
			}
		});
		Thread thread = new Thread(() -> {
			try {
				probe.connect();
			}
			catch (Exception ex) {
				outcome.complete(ex);
			}
			outcome.complete(new IOException("the server closed the replication connection"));
		}, "binlog-capture-check");
		thread.setDaemon(true);
		thread.start();
		try {
			Exception failure = outcome.get(this.properties.getConnectTimeout().toMillis(), TimeUnit.MILLISECONDS);
			if (failure != null) {
				throw failure;
			}
		}
		catch (TimeoutException ex) {
			throw new IOException("no binlog event within " + this.properties.getConnectTimeout());
		}
		finally {
			probe.disconnect();
		}
	}

}
