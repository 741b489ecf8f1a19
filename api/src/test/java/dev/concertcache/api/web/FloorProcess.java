package dev.concertcache.api.web;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import com.sun.management.ThreadMXBean;
import com.sun.tools.attach.VirtualMachine;

import static org.awaitility.Awaitility.await;

/**
 * The load tests' floor ({@code floor/target/floor.jar}, ADR 0203) in a JVM of its own, as {@code loadtests/run.sh}
 * runs it, with the bytes its request threads allocated read over a local JMX connection (the Attach API).
 */
final class FloorProcess implements AutoCloseable {

	private final Process process;

	private final int port;

	private final JMXConnector jmx;

	private final ThreadMXBean threads;

	private FloorProcess(Process process, int port) throws IOException {
		this.process = process;
		this.port = port;
		try {
			VirtualMachine vm = VirtualMachine.attach(String.valueOf(process.pid()));
			String address;
			try {
				address = vm.startLocalManagementAgent();
			}
			finally {
				vm.detach();
			}
			this.jmx = JMXConnectorFactory.connect(new JMXServiceURL(address));
			this.threads = ManagementFactory.newPlatformMXBeanProxy(this.jmx.getMBeanServerConnection(),
					ManagementFactory.THREAD_MXBEAN_NAME, ThreadMXBean.class);
		}
		catch (com.sun.tools.attach.AttachNotSupportedException ex) {
			throw new IOException(ex);
		}
	}

	/** Starts the floor with {@code concerts} concerts and {@code cursorSecret}, and waits until it answers. */
	static FloorProcess start(int concerts, String cursorSecret) throws IOException {
		Path jar = Path.of("..", "floor", "target", "floor.jar").toAbsolutePath().normalize();
		if (!Files.isRegularFile(jar)) {
			throw new IllegalStateException(jar + " is missing: build with -am (the api depends on the floor's pom)");
		}
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		String java = ProcessHandle.current().info().command().orElse("java");
		File log = Path.of("target", "floor-allocation.log").toFile();
		Process process = new ProcessBuilder(java, "-jar", jar.toString(), "--server.address=127.0.0.1",
				"--server.port=" + port, "--floor.concerts=" + concerts, "--concert-cache.cursor-secret=" + cursorSecret)
			.redirectErrorStream(true)
			.redirectOutput(log)
			.start();
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		HttpRequest probe = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/concerts/1")).build();
		try {
			await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
				if (!process.isAlive()) {
					throw new IllegalStateException("The floor exited; see " + log);
				}
				return client.send(probe, BodyHandlers.discarding()).statusCode() == 200;
			});
			return new FloorProcess(process, port);
		}
		catch (RuntimeException | IOException ex) {
			process.destroyForcibly();
			throw ex;
		}
	}

	int port() {
		return this.port;
	}

	/** The names of Tomcat's connector threads (its acceptor, poller and request threads), the floor's server. */
	static final String TOMCAT_THREADS = "http-nio-";

	/** The names of Jetty's pool threads (its acceptor, selector and request threads), the API's server. */
	static final String JETTY_THREADS = "qtp";

	/** Bytes allocated so far by the floor's request threads ({@link #requestThreadBytes}). */
	long allocatedBytes() {
		return requestThreadBytes(this.threads, TOMCAT_THREADS);
	}

	/**
	 * Bytes allocated so far by the live threads whose names start with {@code serverThreads} (the HTTP server's)
	 * in the JVM {@code threads} describes: what serving requests costs, without the threads that allocate by the
	 * second (the cache's lease renewals and stream reads, JMX itself), whose share of a request grows as the
	 * machine slows.
	 */
	static long requestThreadBytes(ThreadMXBean threads, String serverThreads) {
		long[] ids = threads.getAllThreadIds();
		ThreadInfo[] infos = threads.getThreadInfo(ids);
		long[] bytes = threads.getThreadAllocatedBytes(ids);
		long sum = 0;
		for (int i = 0; i < ids.length; i++) {
			if (infos[i] != null && infos[i].getThreadName().startsWith(serverThreads) && bytes[i] > 0) {
				sum += bytes[i];
			}
		}
		return sum;
	}

	@Override
	public void close() throws IOException {
		try {
			this.jmx.close();
		}
		finally {
			this.process.destroy();
			try {
				if (!this.process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
					this.process.destroyForcibly();
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				this.process.destroyForcibly();
			}
		}
	}

}
