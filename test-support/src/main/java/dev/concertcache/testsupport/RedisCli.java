package dev.concertcache.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Debian's {@code redis-cli}, run as a user would, for what a test does to a server from outside. */
final class RedisCli {

	private RedisCli() {
	}

	/** Runs {@code arguments} against the server on loopback {@code port}; returns the output. */
	static String run(int port, String... arguments) {
		List<String> all = new ArrayList<>(List.of("-h", "127.0.0.1", "-p", String.valueOf(port)));
		all.addAll(List.of(arguments));
		return run(all);
	}

	/** Runs {@code redis-cli} with {@code arguments}; fails unless it exits with 0 within 30 s. */
	static String run(List<String> arguments) {
		List<String> command = new ArrayList<>();
		command.add(ServerProcess.executable("/usr/bin/redis-cli", "/usr/local/bin/redis-cli"));
		command.addAll(arguments);
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
				throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
			}
			return output;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
