package dev.concertcache.testsupport;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A private {@code redis-server} started with the repository's {@code redis/redis.conf}, on a free port.
 */
public final class RedisServer extends ServerProcess {

	private static RedisServer shared;

	private final List<String> extraArguments;

	public RedisServer(String... extraArguments) {
		super("redis");
		this.extraArguments = List.of(extraArguments);
	}

	/** One server for the whole test JVM: starting one per test class would dominate the run time. */
	public static synchronized RedisServer shared() {
		if (shared == null) {
			shared = new RedisServer();
			shared.start();
		}
		else {
			shared.start();
		}
		return shared;
	}

	@Override
	protected List<String> command() {
		List<String> command = new ArrayList<>();
		command.add(executable("/usr/bin/redis-server", "/usr/local/bin/redis-server"));
		Path config = Path.of("redis", "redis.conf");
		try {
			command.add(repositoryFile(config.toString()).toString());
		}
		catch (IllegalStateException noConfigYet) {
			// Only while the repository has no redis.conf; settings below make the server private anyway.
		}
		command.addAll(List.of("--port", String.valueOf(this.port), "--bind", "127.0.0.1", "--dir",
				this.dir.toString(), "--daemonize", "no", "--save", "", "--appendonly", "no"));
		command.addAll(this.extraArguments);
		return command;
	}

	public String host() {
		return "127.0.0.1";
	}

	/** Runs a command on this server with {@code redis-cli} and returns its output. */
	public String command(String... arguments) {
		return RedisCli.run(this.port, arguments);
	}

}
