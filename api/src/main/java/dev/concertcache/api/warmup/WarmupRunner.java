package dev.concertcache.api.warmup;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

import dev.concertcache.api.ApiProperties;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheWarmup;

/**
 * Before the instance reports ready, replays the read journey against itself over loopback HTTP for
 * {@code concert-cache.warmup.duration}: list pages, a concert's schedules, sometimes its detail or the next page,
 * now and then a 404 and a 400. By the time the first user arrives, the JIT has compiled the whole request path
 * (Tomcat, filters, Spring MVC, both cache tiers, JDBC, Jackson) instead of compiling it on the users' time. The
 * requests run inside a {@link TieredCacheWarmup}, so the caches stay as cold as they were (ADR 0202). Spring Boot
 * reports ready once application runners return, so no load balancer or probe sends traffic meanwhile.
 */
@Component
class WarmupRunner implements ApplicationRunner {

	private static final Log logger = LogFactory.getLog(WarmupRunner.class);

	/** List pages walked for ids to read; the journey then picks among them. */
	private static final int PAGES = 100;

	private static final int PAGE_SIZE = 20;

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private final ApiProperties.Warmup settings;

	private final TieredCacheManager caches;

	private final WarmupFilter filter;

	private final Environment environment;

	private final JsonMapper json = JsonMapper.builder().build();

	private volatile Result result = new Result(0, 0, Duration.ZERO, false);

	WarmupRunner(ApiProperties properties, TieredCacheManager caches, WarmupFilter filter, Environment environment) {
		this.settings = properties.getWarmup();
		this.caches = caches;
		this.filter = filter;
		this.environment = environment;
	}

	@Override
	public void run(ApplicationArguments args) throws Exception {
		Duration duration = this.settings.getMaxDuration();
		Integer port = this.environment.getProperty("local.server.port", Integer.class);
		if (duration.isZero() || duration.isNegative() || port == null) {
			return;
		}
		long started = System.nanoTime();
		HttpClient http = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(TIMEOUT)
			.build();
		try (TieredCacheWarmup warmup = this.caches.openWarmup()) {
			this.filter.begin(warmup);
			try {
				this.result = new Journeys(http, baseUri(port)).run(started + duration.toNanos());
			}
			finally {
				this.filter.end();
			}
		}
		Result done = this.result;
		logger.info("Warm-up: " + done.requests() + " requests (" + done.failed() + " failed) in "
				+ done.took().toMillis() + " ms, " + (done.settled() ? "until the JIT settled" : "the longest allowed")
				+ "; the caches are as cold as before");
	}

	/** What the last warm-up did; for tests and diagnostics. */
	Result result() {
		return this.result;
	}

	private String baseUri(int port) throws IOException {
		String configured = this.environment.getProperty("server.address");
		InetAddress address = (configured != null) ? InetAddress.getByName(configured) : null;
		if (address == null || address.isAnyLocalAddress()) {
			address = InetAddress.getLoopbackAddress();
		}
		String host = address.getHostAddress();
		return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
	}

	/**
	 * @param requests requests sent
	 * @param failed requests that failed (5xx or no answer)
	 * @param took how long the warm-up lasted
	 * @param settled whether it ended because the JIT settled, rather than at the longest allowed
	 */
	record Result(int requests, int failed, Duration took, boolean settled) {
	}

	/** One warm-up run: walks the first pages for ids, then replays journeys on several threads. */
	private final class Journeys {

		private final HttpClient http;

		private final String base;

		private volatile boolean stopped;

		private final List<String> cursors = new ArrayList<>();

		private final List<long[]> ids = new ArrayList<>();

		private final AtomicInteger requests = new AtomicInteger();

		private final AtomicInteger failed = new AtomicInteger();

		Journeys(HttpClient http, String base) {
			this.http = http;
			this.base = base;
		}

		Result run(long deadline) throws Exception {
			long started = System.nanoTime();
			walkPages(deadline);
			int threads = Math.max(1, WarmupRunner.this.settings.getConcurrency());
			ExecutorService executor = Executors.newFixedThreadPool(threads, (task) -> {
				Thread thread = new Thread(task, "warmup");
				thread.setDaemon(true);
				return thread;
			});
			try {
				List<Future<?>> running = new ArrayList<>();
				for (int i = 0; i < threads; i++) {
					running.add(executor.submit(this::loop));
				}
				boolean settled = new JitSettling(WarmupRunner.this.settings.getQuietCompilation()).await(deadline);
				this.stopped = true;
				for (Future<?> future : running) {
					future.get();
				}
				return new Result(this.requests.get(), this.failed.get(),
						Duration.ofNanos(System.nanoTime() - started), settled);
			}
			finally {
				executor.shutdownNow();
			}
		}

		private void walkPages(long deadline) throws Exception {
			String cursor = null;
			while (this.cursors.size() < PAGES && System.nanoTime() < deadline) {
				HttpResponse<String> page = send(listPath(cursor), HttpResponse.BodyHandlers.ofString());
				if (page == null || page.statusCode() != 200) {
					return;
				}
				JsonNode body = WarmupRunner.this.json.readTree(page.body());
				this.cursors.add(cursor);
				this.ids.add(body.get("items").valueStream().mapToLong((item) -> item.get("id").asLong()).toArray());
				JsonNode next = body.get("nextCursor");
				if (next == null || next.isNull()) {
					return;
				}
				cursor = next.asString();
			}
		}

		private void loop() {
			ThreadLocalRandom random = ThreadLocalRandom.current();
			for (long n = 0; !this.stopped; n++) {
				if (this.cursors.isEmpty()) {
					read(listPath(null));
					read("/api/concerts/0");
					continue;
				}
				int page = random.nextInt(this.cursors.size());
				read(listPath(this.cursors.get(page)));
				long[] onPage = this.ids.get(page);
				if (onPage.length > 0) {
					long id = onPage[random.nextInt(onPage.length)];
					read("/api/concerts/" + id + "/schedules");
					if (random.nextDouble() < 0.4) {
						read("/api/concerts/" + id);
					}
				}
				if (page + 1 < this.cursors.size() && random.nextDouble() < 0.15) {
					read(listPath(this.cursors.get(page + 1)));
				}
				if (n % 64 == 0) {
					// The problem+json paths: an unknown concert and a size out of range.
					read("/api/concerts/0");
					read("/api/concerts?size=0");
				}
			}
		}

		private void read(String path) {
			send(path, HttpResponse.BodyHandlers.discarding());
		}

		/** The response, or null (counted as failed) when there was none or it was a 5xx. */
		private <T> HttpResponse<T> send(String path, HttpResponse.BodyHandler<T> body) {
			this.requests.incrementAndGet();
			HttpRequest request = HttpRequest.newBuilder(URI.create(this.base + path))
				.timeout(TIMEOUT)
				.header(WarmupFilter.HEADER, WarmupRunner.this.filter.token())
				.GET()
				.build();
			try {
				HttpResponse<T> response = this.http.send(request, body);
				if (response.statusCode() >= 500) {
					this.failed.incrementAndGet();
				}
				return response;
			}
			catch (IOException ex) {
				this.failed.incrementAndGet();
				return null;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return null;
			}
		}

		private String listPath(String cursor) {
			return "/api/concerts?size=" + PAGE_SIZE
					+ ((cursor != null) ? "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8) : "");
		}

	}

	/**
	 * Waits until the JIT compiler has settled: over the last {@value #WINDOW_SECONDS} seconds it spent less than
	 * {@code quiet} per second compiling ({@link CompilationMXBean}, summed over compiler threads). At least one
	 * full window always passes, since the interpreter hands the JIT its first work within seconds.
	 */
	private static final class JitSettling {

		private static final int WINDOW_SECONDS = 5;

		private final CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();

		private final long quietMillis;

		JitSettling(Duration quiet) {
			this.quietMillis = quiet.toMillis() * WINDOW_SECONDS;
		}

		/** True when the JIT settled before {@code deadline} (nano time), false at the deadline. */
		boolean await(long deadline) throws InterruptedException {
			boolean measurable = this.compiler != null && this.compiler.isCompilationTimeMonitoringSupported();
			long[] window = new long[WINDOW_SECONDS + 1];
			for (int second = 0; System.nanoTime() < deadline; second++) {
				window[second % window.length] = measurable ? this.compiler.getTotalCompilationTime() : 0;
				if (measurable && second >= WINDOW_SECONDS
						&& window[second % window.length] - window[(second + 1) % window.length] < this.quietMillis) {
					return true;
				}
				Thread.sleep(Math.max(0, Math.min(1000, (deadline - System.nanoTime()) / 1_000_000)));
			}
			return false;
		}

	}

}
