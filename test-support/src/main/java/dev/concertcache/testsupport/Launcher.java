package dev.concertcache.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Starts private servers for the load runner and the scripts ({@code scripts/services.sh}) with the classes the
 * tests start theirs with, so that both get the same command lines, settings, database and user, and readiness
 * waits. Each server is left running when this JVM exits ({@link ServerProcess#detach()}), writing to
 * {@code server.log} in its directory; what the shell needs to use, restart and stop it is printed on standard
 * output as {@code NAME=value} lines:
 * <ul>
 * <li>{@code redis}: {@code REDIS_PORT}, {@code REDIS_DIR}, {@code REDIS_PID}, {@code REDIS_COMMAND};</li>
 * <li>{@code redis-cluster [PRIMARIES REPLICAS]} (default 3 1): {@code REDIS_CLUSTER_PORTS} (space-separated, the
 * primaries first), {@code REDIS_CLUSTER_NODES} ({@code host:port,...}), {@code REDIS_PORT} (the first node), and
 * for each node's port P {@code REDIS_CLUSTER_NODE_P_PID}, {@code _DIR} and {@code _COMMAND};</li>
 * <li>{@code redis-sentinel}: {@code REDIS_SENTINEL_MASTER} (the monitored name) and, each with {@code _PORT},
 * {@code _DIR}, {@code _PID} and {@code _COMMAND}, {@code REDIS_PRIMARY}, {@code REDIS_REPLICA} (of that primary)
 * and {@code REDIS_SENTINEL} (quorum 1);</li>
 * <li>{@code mariadb} or {@code mysql}: {@code DB_PORT}, {@code DB_DIR}, {@code DB_PID}, {@code DB_SOCKET},
 * {@code DB_JDBC_URL}, {@code DB_COMMAND}.</li>
 * </ul>
 * A {@code _COMMAND} is the server's command line, shell-quoted: run again, it starts the server on the same port
 * and directory, with the data that survived. If a server fails to start, or this JVM is stopped before it has
 * printed, what it started is stopped and deleted, and the exit status is 1.
 * <p>
 * Usage, in the repository (it reads {@code redis/redis.conf} and {@code ops/mariadb/}):
 * {@code java -cp test-support/target/classes dev.concertcache.testsupport.Launcher SERVER...}. It loads nothing
 * from test-support's dependencies.
 */
public final class Launcher {

	/**
	 * The runner's database holds a benchmark's data set: a buffer pool that holds all of it, so that reads measure
	 * the query path and not the disk, and a redo log large enough that the loader's inserts do not wait on
	 * checkpoints.
	 */
	private static final String[] MARIADB_OPTIONS = { "--innodb-buffer-pool-size=1G", "--innodb-log-file-size=256M" };

	/** As {@link #MARIADB_OPTIONS}, and binary logs kept 7 days, as the README's {@code [mysqld]} lines say. */
	private static final String[] MYSQL_OPTIONS = { "--innodb-buffer-pool-size=1G", "--innodb-redo-log-capacity=512M",
			"--binlog-expire-logs-seconds=604800" };

	private static final Pattern PLAIN_WORD = Pattern.compile("[A-Za-z0-9_./:=,+@%-]+");

	private static final Pattern NUMBER = Pattern.compile("[0-9]+");

	private final List<AutoCloseable> started = new ArrayList<>();

	private final List<String> lines = new ArrayList<>();

	private Launcher() {
	}

	public static void main(String[] arguments) {
		Launcher launcher = new Launcher();
		Thread stopStarted = new Thread(launcher::stopStarted);
		Runtime.getRuntime().addShutdownHook(stopStarted);
		try {
			launcher.start(List.of(arguments));
		}
		catch (RuntimeException ex) {
			System.err.println("launcher: " + ex.getMessage());
			System.exit(1);
		}
		// From here on the servers are the caller's.
		Runtime.getRuntime().removeShutdownHook(stopStarted);
		launcher.lines.forEach(System.out::println);
		System.out.flush();
	}

	private void start(List<String> arguments) {
		if (arguments.isEmpty()) {
			throw new IllegalArgumentException("usage: Launcher redis|redis-cluster [PRIMARIES REPLICAS]|redis-sentinel|mariadb|mysql...");
		}
		for (int i = 0; i < arguments.size(); i++) {
			switch (arguments.get(i)) {
				case "redis" -> redis();
				case "redis-cluster" -> {
					boolean sized = i + 2 < arguments.size() && NUMBER.matcher(arguments.get(i + 1)).matches()
							&& NUMBER.matcher(arguments.get(i + 2)).matches();
					redisCluster(sized ? Integer.parseInt(arguments.get(i + 1)) : 3,
							sized ? Integer.parseInt(arguments.get(i + 2)) : 1);
					i += sized ? 2 : 0;
				}
				case "redis-sentinel" -> redisSentinel();
				case "mariadb" -> database(new MariaDbServer(MARIADB_OPTIONS));
				case "mysql" -> database(new MySqlServer(MYSQL_OPTIONS));
				default -> throw new IllegalArgumentException("no server " + arguments.get(i)
						+ " (redis, redis-cluster, redis-sentinel, mariadb, mysql)");
			}
		}
	}

	private void redis() {
		RedisServer server = started(new RedisServer());
		server.detach();
		server.start();
		process("REDIS", server);
	}

	private void redisCluster(int primaries, int replicas) {
		RedisCluster cluster = started(new RedisCluster(primaries, replicas));
		cluster.detach();
		cluster.start();
		List<RedisCluster.Node> nodes = cluster.nodes();
		print("REDIS_CLUSTER_PORTS",
				nodes.stream().map((node) -> String.valueOf(node.port())).collect(Collectors.joining(" ")));
		print("REDIS_CLUSTER_NODES", cluster.nodesProperty());
		print("REDIS_PORT", String.valueOf(nodes.get(0).port()));
		for (RedisCluster.Node node : nodes) {
			print("REDIS_CLUSTER_NODE_" + node.port() + "_PID", String.valueOf(node.pid()));
			print("REDIS_CLUSTER_NODE_" + node.port() + "_DIR", node.dir.toString());
			print("REDIS_CLUSTER_NODE_" + node.port() + "_COMMAND", shellQuoted(node.command()));
		}
	}

	private void redisSentinel() {
		RedisSentinel sentinel = started(new RedisSentinel());
		sentinel.detach();
		sentinel.start();
		print("REDIS_SENTINEL_MASTER", RedisSentinel.MASTER_NAME);
		List<ServerProcess> processes = sentinel.processes();
		process("REDIS_PRIMARY", processes.get(0));
		process("REDIS_REPLICA", processes.get(1));
		process("REDIS_SENTINEL", processes.get(2));
	}

	private <S extends ServerProcess & DatabaseServer> void database(S server) {
		started(server);
		server.detach();
		server.start();
		if (server instanceof MySqlServer mysql) {
			mysql.cacheUserPassword();
		}
		process("DB", server);
		print("DB_SOCKET", server.socket().toString());
		print("DB_JDBC_URL", server.jdbcUrl());
	}

	private void process(String prefix, ServerProcess server) {
		print(prefix + "_PORT", String.valueOf(server.port()));
		print(prefix + "_DIR", server.dir.toString());
		print(prefix + "_PID", String.valueOf(server.pid()));
		print(prefix + "_COMMAND", shellQuoted(server.command()));
	}

	private <T extends AutoCloseable> T started(T server) {
		this.started.add(server);
		return server;
	}

	private void print(String name, String value) {
		this.lines.add(name + "=" + value);
	}

	private void stopStarted() {
		for (int i = this.started.size() - 1; i >= 0; i--) {
			AutoCloseable server = this.started.get(i);
			try {
				server.close();
			}
			catch (Exception ex) {
				System.err.println("launcher: could not stop " + server + ": " + ex.getMessage());
			}
		}
	}

	/** {@code words} as one line a POSIX shell splits back into them. */
	static String shellQuoted(List<String> words) {
		return words.stream()
			.map((word) -> PLAIN_WORD.matcher(word).matches() ? word : "'" + word.replace("'", "'\\''") + "'")
			.collect(Collectors.joining(" "));
	}

}
