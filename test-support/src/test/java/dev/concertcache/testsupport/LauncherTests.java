package dev.concertcache.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Launcher} run as {@code scripts/services.sh} runs it: in a JVM of its own, whose servers outlive it and
 * whose printed command line starts one again where it was.
 */
class LauncherTests {

	@TempDir
	Path tmp;

	private final List<ProcessHandle> servers = new ArrayList<>();

	@AfterEach
	void stopServers() {
		this.servers.forEach(ProcessHandle::destroyForcibly);
	}

	@Test
	void redisOutlivesTheLauncherAndItsCommandStartsItAgainOnTheSamePortAndDirectory() throws Exception {
		Launched launched = launch("redis");
		assertThat(launched.exitCode()).as(launched.stderr()).isZero();
		Map<String, String> printed = launched.printed();
		int port = Integer.parseInt(printed.get("REDIS_PORT"));
		ProcessHandle server = ProcessHandle.of(Long.parseLong(printed.get("REDIS_PID"))).orElseThrow();
		this.servers.add(server);
		assertThat(printed.get("REDIS_DIR")).startsWith(this.tmp.toString());

		assertThat(RedisCli.run(port, "CONFIG", "GET", "dir")).contains(printed.get("REDIS_DIR"));
		server.destroyForcibly();
		await("the killed server's port to close", () -> !accepts(port));

		Process again = new ProcessBuilder("bash", "-c", "exec " + printed.get("REDIS_COMMAND"))
			.redirectErrorStream(true)
			.redirectOutput(Path.of(printed.get("REDIS_DIR"), "server.log").toFile())
			.start();
		this.servers.add(again.toHandle());
		await("the server started again", () -> accepts(port));
		assertThat(RedisCli.run(port, "CONFIG", "GET", "dir")).contains(printed.get("REDIS_DIR"));
	}

	@Test
	void whatStartedBeforeAFailureIsStoppedAndDeleted() throws Exception {
		Launched launched = launch("redis", "no-such-server");

		assertThat(launched.exitCode()).isEqualTo(1);
		assertThat(launched.stdout()).isEmpty();
		assertThat(launched.stderr()).contains("no server no-such-server");
		try (Stream<Path> left = Files.list(this.tmp)) {
			assertThat(left).isEmpty();
		}
	}

	@Test
	void shellQuotedWordsSplitBackIntoTheSameWords() throws Exception {
		List<String> words = List.of("--save", "", "it's", "two words", "$HOME", "a\"b", "--port=6379");

		Process echo = new ProcessBuilder("bash", "-c", "printf '%s\\n' " + Launcher.shellQuoted(words)).start();

		assertThat(new String(echo.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines())
			.containsExactlyElementsOf(words);
	}

	private Launched launch(String... servers) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-cp",
				System.getProperty("java.class.path"), "-Djava.io.tmpdir=" + this.tmp, Launcher.class.getName()));
		command.addAll(List.of(servers));
		Process launcher = new ProcessBuilder(command).start();
		// Both read to the end: the servers it leaves write elsewhere, so its output ends when it exits.
		String stdout = new String(launcher.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		String stderr = new String(launcher.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(launcher.waitFor(60, TimeUnit.SECONDS)).isTrue();
		return new Launched(launcher.exitValue(), stdout, stderr);
	}

	private static boolean accepts(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
			return true;
		}
		catch (IOException refused) {
			return false;
		}
	}

	private static void await(String what, BooleanSupplier condition) {
		Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
		while (!condition.getAsBoolean()) {
			assertThat(Instant.now()).as("waiting for " + what).isBefore(deadline);
			LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
		}
	}

	private record Launched(int exitCode, String stdout, String stderr) {

		Map<String, String> printed() {
			Map<String, String> printed = new HashMap<>();
			this.stdout.lines().forEach((line) -> printed.put(line.substring(0, line.indexOf('=')),
					line.substring(line.indexOf('=') + 1)));
			return printed;
		}

	}

}
