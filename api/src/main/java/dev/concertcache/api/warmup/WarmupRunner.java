package dev.concertcache.api.warmup;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.core.env.Environment;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.stereotype.Component;
import org.springframework.util.StreamUtils;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

import dev.concertcache.api.ApiProperties;
import dev.concertcache.api.concert.ConcertPage;
import dev.concertcache.api.concert.ConcertSummary;
import dev.concertcache.tiered.HotSetFill;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheWarmup;

/**
 * Before the instance reports ready, replays the read journey against itself over loopback HTTP for
 * {@code concert-cache.warmup.duration}: list pages, a concert's schedules, sometimes its detail or the next page,
 * now and then a 404 and a 400. By the time the first user arrives, the JIT has compiled the whole request path
 * (Tomcat, filters, Spring MVC, both cache tiers, JDBC, Jackson) instead of compiling it on the users' time. The
 * requests run inside a {@link TieredCacheWarmup}, so the caches stay as cold as they were (ADR 0202). Spring Boot
 * reports ready once application runners return, so no load balancer or probe sends traffic meanwhile. At most
 * {@code concert-cache.warmup.max-rate} requests per second, so that an instance joining a fleet on shared cores
 * leaves the serving instances their CPU. Then it fills L1 from the fleet's hot set
 * ({@link TieredCacheManager#fillHotSet()}): the entries the fleet reads most, from Redis, within
 * {@code tiered-cache.hot-set.*}'s bounds.
 */
@Component
class WarmupRunner implements ApplicationRunner {

	private static final Log logger = LogFactory.getLog(WarmupRunner.class);

	/** List pages walked for ids to read; the journey then picks among them. */
	private static final int PAGES = 100;

	private static final int PAGE_SIZE = 20;

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	/**
	 * How often the warm-up drops what its twin caches hold in L1, so that reads go to Redis again; every
	 * {@link #REDIS_COOLING_EVERY}th time their Redis keys too, so that reads load again. A cold instance takes those
	 * paths for minutes; a warm-up whose twins stayed warm after its first seconds left them to the JIT on real
	 * traffic (ADR 0202: 808 C2 compilations in the first 30 s after readiness).
	 */
	private static final Duration COOLING_INTERVAL = Duration.ofSeconds(2);

	private static final int REDIS_COOLING_EVERY = 5;

	/** Tomcat's request threads when {@code server.tomcat.threads.max} is not set (Spring Boot's default). */
	private static final int DEFAULT_SERVER_THREADS = 200;

	private final ApiProperties.Warmup settings;

	private final TieredCacheManager caches;

	private final WarmupFilter filter;

	private final Environment environment;

	private final RestClient.Builder restClients;

	private volatile Result result = new Result(0, 0, Duration.ZERO, false, 0);

	private volatile HotSetFill hotSet = HotSetFill.NONE;

	WarmupRunner(ApiProperties properties, TieredCacheManager caches, WarmupFilter filter, Environment environment,
			RestClient.Builder restClients) {
		this.settings = properties.getWarmup();
		this.caches = caches;
		this.filter = filter;
		this.environment = environment;
		this.restClients = restClients;
	}

	/** The JIT warm-up, then the fill of L1 from the fleet's hot set (ADR 0202): both before readiness. */
	@Override
	public void run(ApplicationArguments args) throws Exception {
		warmUpTheJit();
		this.hotSet = this.caches.fillHotSet();
	}

	private void warmUpTheJit() throws Exception {
		Duration duration = this.settings.getMaxDuration();
		Integer port = this.environment.getProperty("local.server.port", Integer.class);
		if (duration.isZero() || duration.isNegative() || port == null) {
			return;
		}
		long started = System.nanoTime();
		long cpuStarted = processCpuNanos();
		RestClient http = restClient(baseUri(port));
		try (TieredCacheWarmup warmup = this.caches.openWarmup()) {
			this.filter.begin(warmup);
			try {
				this.result = new Journeys(http, warmup).run(started + duration.toNanos());
			}
			finally {
				this.filter.end();
			}
		}
		long cpu = processCpuNanos() - cpuStarted;
		Result done = this.result;
		logger.info("Warm-up: " + done.requests() + " requests (" + done.failed() + " failed, "
				+ done.concurrency() + " in flight) in "
				+ done.took().toMillis() + " ms, " + (done.settled() ? "until the JIT settled" : "the longest allowed")
				+ ", " + String.format("%.1f", cpu / 1e9) + " s of CPU ("
				+ String.format("%.2f", (double) cpu / Math.max(1, done.took().toNanos())) + " cores)"
				+ "; the caches are as cold as before");
	}

	/** What the last warm-up did; for tests and diagnostics. */
	Result result() {
		return this.result;
	}

	/**
	 * Warm-up requests in flight: as configured, else as many as the server's request threads. Fewer would leave
	 * the pool at its spare threads during the warm-up, and real traffic's first seconds would recompile that path
	 * (ADR 0202).
	 */
	private int concurrency() {
		Integer configured = this.settings.getConcurrency();
		int threads = (configured != null) ? configured
				: this.environment.getProperty("server.tomcat.threads.max", Integer.class, DEFAULT_SERVER_THREADS);
		return Math.max(1, threads);
	}

	/** What the last fill of L1 from the hot set did; for tests and diagnostics. */
	HotSetFill hotSet() {
		return this.hotSet;
	}

	/** The CPU time of the whole process (every thread, the JIT's included), 0 where the JVM cannot tell. */
	private static long processCpuNanos() {
		return (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os)
				? Math.max(0, os.getProcessCpuTime()) : 0;
	}

	/**
	 * The application's client (its JSON converters read the API's own records) over loopback HTTP/1.1 keep-alive
	 * connections, as a load balancer's would be, every request carrying the warm-up's token. No client
	 * observations: warm-up requests are already counted where they arrive.
	 */
	private RestClient restClient(String baseUri) {
		JdkClientHttpRequestFactory requests = new JdkClientHttpRequestFactory(
				HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build());
		requests.setReadTimeout(TIMEOUT);
		return this.restClients.clone()
			.baseUrl(baseUri)
			.requestFactory(requests)
			.defaultHeader(WarmupFilter.HEADER, this.filter.token())
			.observationRegistry(ObservationRegistry.NOOP)
			.build();
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
	 * @param concurrency requests it kept in flight
	 */
	record Result(int requests, int failed, Duration took, boolean settled, int concurrency) {
	}

	/** One warm-up run: walks the first pages for ids, then replays journeys on several threads. */
	private final class Journeys {

		private static final String LIST = "/api/concerts?size={size}";

		private static final String LIST_FROM = LIST + "&cursor={cursor}";

		private final RestClient http;

		private final TieredCacheWarmup warmup;

		private final AtomicLong nextCooling = new AtomicLong(System.nanoTime() + COOLING_INTERVAL.toNanos());

		private final AtomicInteger coolings = new AtomicInteger();

		private volatile boolean stopped;

		private final List<String> cursors = new ArrayList<>();

		private final List<long[]> ids = new ArrayList<>();

		private final AtomicInteger requests = new AtomicInteger();

		private final AtomicInteger failed = new AtomicInteger();

		private final long nanosPerRequest;

		private final AtomicLong nextSlot = new AtomicLong(System.nanoTime());

		Journeys(RestClient http, TieredCacheWarmup warmup) {
			this.http = http;
			this.warmup = warmup;
			int rate = WarmupRunner.this.settings.getMaxRate();
			this.nanosPerRequest = (rate > 0) ? TimeUnit.SECONDS.toNanos(1) / rate : 0;
		}

		Result run(long deadline) throws Exception {
			long started = System.nanoTime();
			walkPages(deadline);
			int threads = concurrency();
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
						Duration.ofNanos(System.nanoTime() - started), settled, threads);
			}
			finally {
				executor.shutdownNow();
			}
		}

		/**
		 * Holds the warm-up to {@code max-rate} requests per second over every thread: a joining instance must not
		 * take the CPU the instances already serving share with it.
		 */
		private void pace() {
			if (this.nanosPerRequest <= 0) {
				return;
			}
			long slot = this.nextSlot.getAndAdd(this.nanosPerRequest);
			long wait = slot - System.nanoTime();
			if (wait > 0) {
				LockSupport.parkNanos(wait);
			}
			else if (-wait > TimeUnit.SECONDS.toNanos(1)) {
				// Behind by more than a second (the server was slow): no burst to catch up.
				this.nextSlot.accumulateAndGet(System.nanoTime(), Math::max);
			}
		}

		private void walkPages(long deadline) {
			String cursor = null;
			while (this.cursors.size() < PAGES && System.nanoTime() < deadline) {
				ConcertPage page = page(cursor, ConcertPage.class);
				if (page == null) {
					return;
				}
				this.cursors.add(cursor);
				this.ids.add(page.items().stream().mapToLong(ConcertSummary::id).toArray());
				if (page.nextCursor() == null) {
					return;
				}
				cursor = page.nextCursor();
			}
		}

		/** One thread at a time, every {@link #COOLING_INTERVAL}. */
		private void coolWhenDue() {
			long due = this.nextCooling.get();
			long now = System.nanoTime();
			if (now - due >= 0 && this.nextCooling.compareAndSet(due, now + COOLING_INTERVAL.toNanos())) {
				this.warmup.cool(this.coolings.incrementAndGet() % REDIS_COOLING_EVERY == 0);
			}
		}

		private void loop() {
			ThreadLocalRandom random = ThreadLocalRandom.current();
			for (long n = 0; !this.stopped; n++) {
				coolWhenDue();
				if (this.cursors.isEmpty()) {
					page(null, null);
					get(null, "/api/concerts/{id}", 0);
					continue;
				}
				int page = random.nextInt(this.cursors.size());
				page(this.cursors.get(page), null);
				long[] onPage = this.ids.get(page);
				if (onPage.length > 0) {
					long id = onPage[random.nextInt(onPage.length)];
					get(null, "/api/concerts/{id}/schedules", id);
					if (random.nextDouble() < 0.4) {
						get(null, "/api/concerts/{id}", id);
					}
				}
				if (page + 1 < this.cursors.size() && random.nextDouble() < 0.15) {
					page(this.cursors.get(page + 1), null);
				}
				if (n % 64 == 0) {
					// The problem+json paths: an unknown concert and a size out of range.
					get(null, "/api/concerts/{id}", 0);
					get(null, "/api/concerts?size={size}", 0);
				}
			}
		}

		private <T> T page(String cursor, Class<T> type) {
			return (cursor != null) ? get(type, LIST_FROM, PAGE_SIZE, cursor) : get(type, LIST, PAGE_SIZE);
		}

		/**
		 * GETs {@code uri}: its body as {@code type} when that is given and the answer is a 2xx, else null (the body
		 * read and dropped, the connection kept). A 5xx or no answer counts as failed; a 4xx is an answer.
		 */
		private <T> T get(Class<T> type, String uri, Object... variables) {
			pace();
			this.requests.incrementAndGet();
			try {
				return this.http.get().uri(uri, variables).exchange((request, response) -> {
					if (response.getStatusCode().is5xxServerError()) {
						this.failed.incrementAndGet();
					}
					if (type != null && response.getStatusCode().is2xxSuccessful()) {
						return response.bodyTo(type);
					}
					StreamUtils.drain(response.getBody());
					return null;
				});
			}
			catch (RestClientException ex) {
				this.failed.incrementAndGet();
				return null;
			}
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
