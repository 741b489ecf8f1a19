package dev.concertcache.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A private Redis Sentinel setup for tests: a primary and its replica ({@code redis-server} with the repository's
 * {@code redis/redis.conf}) and one Sentinel ({@code redis-server --sentinel}, quorum 1) watching them, on free
 * loopback ports. Sentinel rewrites its configuration file, and has a promoted replica rewrite its own, so each
 * process runs on a copy in its temporary directory.
 * {@link #killPrimary()} crashes the primary and returns once the Sentinel has promoted the replica. Stopped and
 * deleted on {@link #close()} or at JVM exit, unless {@link #detach() detached}.
 */
public final class RedisSentinel implements AutoCloseable {

	/** The name the Sentinel monitors the primary under: the value of {@code spring.data.redis.sentinel.master}. */
	public static final String MASTER_NAME = "concert-cache";

	/** How long the primary may be unreachable before the Sentinel fails it over: short, for tests. */
	public static final Duration DOWN_AFTER = Duration.ofMillis(1000);

	private static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(3);

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

	private static final Duration POLL_INTERVAL = Duration.ofMillis(50);

	private final Node first = new Node(null);

	private final Node second = new Node(this.first);

	private final Sentinel sentinel = new Sentinel(this.first);

	private boolean started;

	/** Starts from now on outlive this JVM: see {@link ServerProcess#detach()}. */
	public synchronized void detach() {
		processes().forEach(ServerProcess::detach);
	}

	/** The first primary, its replica and the Sentinel, in start order. */
	List<ServerProcess> processes() {
		return List.of(this.first, this.second, this.sentinel);
	}

	/** Starts both servers and the Sentinel; waits until the replica is in sync and the Sentinel knows it. */
	public synchronized RedisSentinel start() {
		if (this.started) {
			return this;
		}
		this.first.start();
		this.second.start();
		await("the replica in sync", () -> this.second.command("INFO", "replication")
			.contains("master_link_status:up"));
		this.sentinel.start();
		await("the Sentinel to know the replica", () -> sentinel("SENTINEL", "REPLICAS", MASTER_NAME)
			.contains(String.valueOf(this.second.port())));
		this.started = true;
		return this;
	}

	/** {@code host:port} of the Sentinel: the value of {@code spring.data.redis.sentinel.nodes}. */
	public String sentinelAddress() {
		return "127.0.0.1:" + this.sentinel.port();
	}

	/** The server the Sentinel names as primary now. */
	public Node primary() {
		List<String> address = sentinel("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME).lines().toList();
		int port = Integer.parseInt(address.get(1).trim());
		return (port == this.first.port()) ? this.first : this.second;
	}

	/** The server that is not the primary. */
	public Node replica() {
		return (primary() == this.first) ? this.second : this.first;
	}

	/**
	 * Kills the primary (SIGKILL, as a crash would) and waits until the Sentinel has promoted the replica and names
	 * it. Writes the old primary acknowledged but had not yet replicated are lost, as in production.
	 * @return the promoted replica
	 */
	public Node killPrimary() {
		Node primary = primary();
		Node replica = replica();
		primary.kill();
		await("the promotion of " + replica + " after " + primary + " was killed",
				() -> primary() == replica && replica.isPrimary());
		return replica;
	}

	/** Runs a command on the Sentinel with {@code redis-cli} and returns its output. */
	public String sentinel(String... arguments) {
		return this.sentinel.command(arguments);
	}

	@Override
	public synchronized void close() {
		this.sentinel.close();
		this.second.close();
		this.first.close();
	}

	private void await(String what, BooleanSupplier condition) {
		Instant deadline = Instant.now().plus(READY_TIMEOUT);
		while (!condition.getAsBoolean()) {
			if (Instant.now().isAfter(deadline)) {
				throw new IllegalStateException("Timed out waiting for " + what + "; Sentinel log:\n"
						+ this.sentinel.log());
			}
			LockSupport.parkNanos(POLL_INTERVAL.toNanos());
		}
	}

	/** One {@code redis-server}: the primary, or a replica of it. */
	public static final class Node extends ServerProcess {

		private final Node primary;

		private final Path config;

		Node(Node primary) {
			super("redis-sentinel-node");
			this.primary = primary;
			// The Sentinel has a promoted replica rewrite its configuration file (CONFIG REWRITE): a copy, never
			// the repository's.
			this.config = this.dir.resolve("redis.conf");
			try {
				Files.copy(repositoryFile("redis/redis.conf"), this.config);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		public String address() {
			return "127.0.0.1:" + this.port;
		}

		/** Runs a command on this server with {@code redis-cli} and returns its output. */
		public String command(String... arguments) {
			return RedisCli.run(this.port, arguments);
		}

		/** Whether this server, in its own view, is a primary. */
		public boolean isPrimary() {
			return command("INFO", "replication").contains("role:master");
		}

		@Override
		protected List<String> command() {
			List<String> command = new ArrayList<>();
			command.add(executable("/usr/bin/redis-server", "/usr/local/bin/redis-server"));
			command.add(this.config.toString());
			// Full syncs through a snapshot on disk: no 5 s wait for more replicas (see RedisCluster's nodes).
			command.addAll(List.of("--port", String.valueOf(this.port), "--bind", "127.0.0.1", "--dir",
					this.dir.toString(), "--daemonize", "no", "--save", "", "--appendonly", "no", "--repl-diskless-sync",
					"no"));
			if (this.primary != null) {
				command.addAll(List.of("--replicaof", "127.0.0.1", String.valueOf(this.primary.port())));
			}
			return command;
		}

		@Override
		public String toString() {
			return "server " + address();
		}

	}

	/** The Sentinel, with a configuration file of its own to rewrite. */
	private static final class Sentinel extends ServerProcess {

		private final Path config;

		Sentinel(Node primary) {
			super("redis-sentinel");
			this.config = this.dir.resolve("sentinel.conf");
			String name = MASTER_NAME;
			try {
				Files.writeString(this.config, String.join("\n", "port " + this.port, "bind 127.0.0.1",
						"daemonize no", "dir " + this.dir, "sentinel monitor " + name + " 127.0.0.1 " + primary.port() + " 1",
						"sentinel down-after-milliseconds " + name + " " + DOWN_AFTER.toMillis(),
						"sentinel failover-timeout " + name + " " + FAILOVER_TIMEOUT.toMillis(),
						"sentinel parallel-syncs " + name + " 1", ""));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		String command(String... arguments) {
			return RedisCli.run(this.port, arguments);
		}

		@Override
		protected List<String> command() {
			return List.of(executable("/usr/bin/redis-server", "/usr/local/bin/redis-server"), this.config.toString(),
					"--sentinel");
		}

	}

}
