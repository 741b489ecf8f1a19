package dev.concertcache.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * A server started as a child process on a free loopback port with a throwaway directory, stopped and
 * deleted on {@link #close()} or at JVM exit; or, {@link #detach() detached}, left running when the JVM exits
 * (the {@link Launcher}'s servers, which the shell that called it stops).
 */
public abstract class ServerProcess implements AutoCloseable {

	private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

	private static final Duration POLL_INTERVAL = Duration.ofMillis(20);

	protected final Path dir;

	protected int port;

	private ProcessHandle process;

	private boolean started;

	private boolean detached;

	protected ServerProcess(String name) {
		this(name, Path.of(System.getProperty("java.io.tmpdir")));
	}

	/** A server whose throwaway directory is made in {@code parent} (a chrooted server's, inside its root). */
	protected ServerProcess(String name, Path parent) {
		try {
			this.dir = Files.createTempDirectory(parent, "concert-cache-" + name + "-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.port = freePort();
	}

	public int port() {
		return this.port;
	}

	/** The process id of the running server. */
	public long pid() {
		return this.process.pid();
	}

	/**
	 * Starts from now on register no JVM-exit hook: the process outlives this JVM, and whoever this JVM hands its
	 * pid and directory to stops it and deletes them.
	 */
	public synchronized void detach() {
		this.detached = true;
	}

	/** Starts the process and waits until its port accepts connections. */
	public synchronized void start() {
		if (this.process != null && this.process.isAlive()) {
			return;
		}
		if (!this.started && !isFree(this.port)) {
			// Taken since it was chosen (another server, or a cluster node's bus port): the server would fail to
			// bind while the port's owner answered for it. A restart keeps its port, as a restarted server does.
			this.port = freePort();
		}
		try {
			this.process = this.detached ? spawnDetached()
					: new ProcessBuilder(command()).redirectErrorStream(true)
						.redirectOutput(ProcessBuilder.Redirect.appendTo(this.dir.resolve("server.log").toFile()))
						.start()
						.toHandle();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not start " + command().get(0)
					+ " (install it: apt-get install redis-server mariadb-server)", ex);
		}
		if (!this.detached) {
			Runtime.getRuntime().addShutdownHook(new Thread(this::close));
		}
		awaitPort();
		this.started = true;
	}

	/** Kills the process (SIGKILL), as a crash or a pulled cable would; {@link #start()} brings it back. */
	public synchronized void kill() {
		if (this.process != null) {
			this.process.destroyForcibly();
			waitFor(this.process);
			this.process = null;
		}
	}

	@Override
	public synchronized void close() {
		if (this.process != null) {
			this.process.destroy();
			waitFor(this.process);
			this.process = null;
		}
		deleteRecursively(this.dir);
	}

	protected abstract List<String> command();

	/**
	 * The server as the child of a shell that exits at once, its output to the same log: a child of this JVM's would
	 * hold up the JVM's exit by 300 ms (it waits that long for a thread in native code, here the one in
	 * {@code waitpid} for the child).
	 */
	private ProcessHandle spawnDetached() throws IOException {
		List<String> shell = new ArrayList<>(List.of("sh", "-c", "\"$@\" </dev/null >\"$0\" 2>&1 & echo $!",
				this.dir.resolve("server.log").toString()));
		shell.addAll(command());
		Process spawner = new ProcessBuilder(shell).redirectErrorStream(true).start();
		String pid = new String(spawner.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
		spawner.onExit().join();
		return ProcessHandle.of(Long.parseLong(pid))
			.orElseThrow(() -> new IllegalStateException(command().get(0) + " exited: " + log()));
	}

	private void awaitPort() {
		Instant deadline = Instant.now().plus(START_TIMEOUT);
		while (Instant.now().isBefore(deadline)) {
			if (!running(this.process)) {
				throw new IllegalStateException(command().get(0) + " exited: " + log());
			}
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress("127.0.0.1", this.port), 200);
				return;
			}
			catch (IOException notYet) {
				// A refused connection returns at once: without a pause this loop would take a core from the server.
				LockSupport.parkNanos(POLL_INTERVAL.toNanos());
			}
		}
		throw new IllegalStateException(command().get(0) + " did not open port " + this.port + ": " + log());
	}

	/**
	 * Alive and not a zombie: a detached server that exited is not this JVM's child to reap, and stays a zombie until
	 * init reaps it, which {@link ProcessHandle#isAlive()} counts as alive.
	 */
	static boolean running(ProcessHandle process) {
		try {
			String stat = Files.readString(Path.of("/proc", String.valueOf(process.pid()), "stat"));
			return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
		}
		catch (IOException | IndexOutOfBoundsException noProcFileSystem) {
			return process.isAlive();
		}
	}

	protected String log() {
		try {
			return Files.readString(this.dir.resolve("server.log"));
		}
		catch (IOException ex) {
			return "(no log)";
		}
	}

	private void waitFor(ProcessHandle process) {
		if (!this.detached) {
			process.onExit().join();
			return;
		}
		while (running(process)) {
			LockSupport.parkNanos(POLL_INTERVAL.toNanos());
		}
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException taken) {
			return false;
		}
	}

	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static Path repositoryFile(String relative) {
		Path dir = Path.of("").toAbsolutePath();
		while (dir != null) {
			Path candidate = dir.resolve(relative);
			if (Files.exists(candidate)) {
				return candidate;
			}
			dir = dir.getParent();
		}
		throw new IllegalStateException(relative + " not found above " + Path.of("").toAbsolutePath());
	}

	static String executable(String... candidates) {
		for (String candidate : candidates) {
			if (Files.isExecutable(Path.of(candidate))) {
				return candidate;
			}
		}
		return Path.of(candidates[0]).getFileName().toString();
	}

	private static void deleteRecursively(Path root) {
		if (!Files.exists(root)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(root)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// A leftover temp dir is harmless; the test result is what matters.
		}
	}

}
