package dev.concertcache.testsupport;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * A private Redis Cluster for tests: {@code redis-server} processes in cluster mode with the repository's
 * {@code redis/redis.conf}, on free loopback ports (3 primaries with 1 replica each by default), created with
 * {@code redis-cli --cluster create}; {@code scripts/services.sh}'s {@code start_redis_cluster} starts this one for
 * the load runner, through the {@link Launcher}. {@link #killPrimary(Node)} crashes a primary and returns once its replica has taken over;
 * {@link #restart(Node)} brings a node back with its cluster identity, as a replica when its slots have moved.
 * Stopped and deleted on {@link #close()} or at JVM exit, unless {@link #detach() detached}.
 */
public final class RedisCluster implements AutoCloseable {

	/**
	 * How long a node may be unreachable before the others fail it over: short, so a failover takes a few
	 * seconds in a test rather than Redis's default 15.
	 */
	public static final Duration NODE_TIMEOUT = Duration.ofMillis(1000);

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

	private static final Duration POLL_INTERVAL = Duration.ofMillis(100);

	private final int primaries;

	private final int replicasPerPrimary;

	private final List<Node> nodes = new ArrayList<>();

	private boolean created;

	private boolean detached;

	/** Three primaries with one replica each. */
	public RedisCluster() {
		this(3, 1);
	}

	public RedisCluster(int primaries, int replicasPerPrimary) {
		if (primaries < 3) {
			throw new IllegalArgumentException("redis-cli --cluster create needs at least 3 primaries");
		}
		this.primaries = primaries;
		this.replicasPerPrimary = replicasPerPrimary;
	}

	/** Nodes started from now on outlive this JVM: see {@link ServerProcess#detach()}. */
	public synchronized void detach() {
		this.detached = true;
		this.nodes.forEach(Node::detach);
	}

	/** Starts every node, creates the cluster and waits until every slot is served and replicas are in sync. */
	public synchronized RedisCluster start() {
		if (this.created) {
			return this;
		}
		for (int i = 0; i < this.primaries * (1 + this.replicasPerPrimary); i++) {
			Node node = new Node();
			this.nodes.add(node);
			if (this.detached) {
				node.detach();
			}
			node.start();
		}
		List<String> create = new ArrayList<>(List.of("--cluster", "create"));
		this.nodes.forEach((node) -> create.add(node.address()));
		create.addAll(List.of("--cluster-replicas", String.valueOf(this.replicasPerPrimary), "--cluster-yes"));
		RedisCli.run(create);
		this.created = true;
		awaitHealthy();
		return this;
	}

	/** Every node, in creation order (the primaries first, as {@code --cluster create} assigns them). */
	public List<Node> nodes() {
		return List.copyOf(this.nodes);
	}

	/** {@code host:port,...} of every node: the value of {@code spring.data.redis.cluster.nodes}. */
	public String nodesProperty() {
		return this.nodes.stream().map(Node::address).collect(Collectors.joining(","));
	}

	/** The node that currently serves {@code key}'s slot as primary. */
	public Node primaryFor(String key) {
		int slot = Integer.parseInt(anyRunningNode().command("CLUSTER", "KEYSLOT", key).trim());
		for (Node node : runningNodes()) {
			if (node.isPrimary() && node.servesSlot(slot)) {
				return node;
			}
		}
		throw new IllegalStateException("No running primary serves slot " + slot + " of " + key);
	}

	/** The node a primary's replica runs on, as the primary sees it. */
	public Node replicaOf(Node primary) {
		return replicasOf(primary).stream()
			.findFirst()
			.orElseThrow(() -> new IllegalStateException(primary + " has no running replica"));
	}

	/** Every running replica of a primary: after restarts, a primary may have more than one. */
	public List<Node> replicasOf(Node primary) {
		return runningNodes().stream().filter((node) -> primary.id().equals(node.primaryId())).toList();
	}

	/**
	 * Kills {@code primary} (SIGKILL, as a crash would) and waits until its replica has been promoted and every
	 * other node sees the whole slot range served again. Writes the old primary acknowledged but had not yet
	 * replicated are lost, as in production.
	 * @return the promoted replica, now the primary of the killed node's slots
	 */
	public Node killPrimary(Node primary) {
		Node replica = replicaOf(primary);
		primary.kill();
		await("the promotion of " + replica + " after " + primary + " was killed",
				() -> replica.isPrimary() && clusterOk());
		return replica;
	}

	/**
	 * Starts a node again with its directory and cluster identity, after {@link #killPrimary} or after killing it
	 * with {@link Node#kill()} (a running node is killed first), and waits until the cluster is healthy with it.
	 * No persistence: it comes back empty; a former primary whose slots moved rejoins as a replica and resyncs.
	 */
	public void restart(Node node) {
		node.kill();
		node.start();
		await("the cluster with " + node + " back",
				() -> runningNodes().stream().allMatch((each) -> each.isConnectedTo(this.nodes.size())) && healthy());
	}

	@Override
	public synchronized void close() {
		for (Node node : this.nodes) {
			node.close();
		}
	}

	private List<Node> runningNodes() {
		return this.nodes.stream().filter(Node::isRunning).toList();
	}

	private Node anyRunningNode() {
		return runningNodes().stream().findFirst().orElseThrow(() -> new IllegalStateException("No node running"));
	}

	private void awaitHealthy() {
		await("the cluster to be ok with every replica in sync", this::healthy);
	}

	private boolean healthy() {
		for (Node node : runningNodes()) {
			if (!node.clusterOk()) {
				return false;
			}
			if (!node.isPrimary() && !node.command("INFO", "replication").contains("master_link_status:up")) {
				return false;
			}
		}
		return true;
	}

	private boolean clusterOk() {
		return runningNodes().stream().allMatch(Node::clusterOk);
	}

	private void await(String what, BooleanSupplier condition) {
		Instant deadline = Instant.now().plus(READY_TIMEOUT);
		while (!condition.getAsBoolean()) {
			if (Instant.now().isAfter(deadline)) {
				throw new IllegalStateException("Timed out waiting for " + what + "; nodes:\n"
						+ anyRunningNode().command("CLUSTER", "NODES"));
			}
			LockSupport.parkNanos(POLL_INTERVAL.toNanos());
		}
	}

	/** One {@code redis-server} of the cluster. */
	public static final class Node extends ServerProcess {

		private final int busPort;

		private volatile boolean running;

		Node() {
			super("redis-cluster");
			int bus = freePort();
			while (bus == this.port) {
				bus = freePort();
			}
			// Its own bus port: port + 10000, Redis's default, may be taken or above 65535.
			this.busPort = bus;
		}

		@Override
		public synchronized void start() {
			super.start();
			this.running = true;
		}

		@Override
		public synchronized void kill() {
			this.running = false;
			super.kill();
		}

		@Override
		public synchronized void close() {
			this.running = false;
			super.close();
		}

		public boolean isRunning() {
			return this.running;
		}

		public String address() {
			return "127.0.0.1:" + this.port;
		}

		/** Runs a command on this node with {@code redis-cli} and returns its output. */
		public String command(String... arguments) {
			return RedisCli.run(this.port, arguments);
		}

		/** Whether this node, in its own view, is a primary. */
		public boolean isPrimary() {
			return myself().flags().contains("master");
		}

		String id() {
			return myself().id();
		}

		String primaryId() {
			return myself().primaryId();
		}

		boolean servesSlot(int slot) {
			for (String range : myself().slots()) {
				String[] bounds = range.split("-");
				int from = Integer.parseInt(bounds[0]);
				int to = Integer.parseInt(bounds[bounds.length - 1]);
				if (slot >= from && slot <= to) {
					return true;
				}
			}
			return false;
		}

		boolean clusterOk() {
			return this.running && command("CLUSTER", "INFO").contains("cluster_state:ok");
		}

		boolean isConnectedTo(int clusterSize) {
			return this.running && command("CLUSTER", "INFO").contains("cluster_known_nodes:" + clusterSize)
					&& command("CLUSTER", "NODES").lines().noneMatch((line) -> line.contains("fail"));
		}

		private NodeLine myself() {
			return command("CLUSTER", "NODES").lines()
				.map(NodeLine::parse)
				.filter((line) -> line.flags().contains("myself"))
				.findFirst()
				.orElseThrow(() -> new IllegalStateException(this + " does not list itself"));
		}

		@Override
		protected List<String> command() {
			List<String> command = new ArrayList<>();
			command.add(executable("/usr/bin/redis-server", "/usr/local/bin/redis-server"));
			command.add(repositoryFile("redis/redis.conf").toString());
			// A replica's full sync through a snapshot on disk starts at once; over the socket it waits 5 s
			// (repl-diskless-sync-delay) for more replicas, at every start and failover of a test (ADR 0206).
			command.addAll(List.of("--port", String.valueOf(this.port), "--cluster-port", String.valueOf(this.busPort),
					"--bind", "127.0.0.1", "--dir", this.dir.toString(), "--daemonize", "no", "--save", "",
					"--appendonly", "no", "--cluster-enabled", "yes", "--cluster-config-file",
					this.dir.resolve("nodes.conf").toString(), "--cluster-node-timeout",
					String.valueOf(NODE_TIMEOUT.toMillis()), "--replica-serve-stale-data", "no",
					"--repl-diskless-sync", "no"));
			return command;
		}

		@Override
		public String toString() {
			return "node " + address();
		}

	}

	/** One line of {@code CLUSTER NODES}: id, address, flags, primary id, ..., slot ranges. */
	private record NodeLine(String id, List<String> flags, String primaryId, List<String> slots) {

		static NodeLine parse(String line) {
			String[] fields = line.trim().split(" ");
			List<String> slots = new ArrayList<>();
			for (int i = 8; i < fields.length; i++) {
				if (!fields[i].startsWith("[")) {
					slots.add(fields[i]);
				}
			}
			return new NodeLine(fields[0], List.of(fields[2].split(",")), fields[3], slots);
		}

	}

}
