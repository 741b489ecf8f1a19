package dev.concertcache.api.warmup;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.http.HttpClient;
import java.time.Duration;

import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.core.env.Environment;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;

import dev.concertcache.api.ApiProperties;
import dev.concertcache.tiered.HotSetFill;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheWarmup;

/**
 * Before the instance reports ready, replays the read journey against itself over loopback HTTP for
 * {@code concert-cache.warmup.max-duration} at most: list pages, a concert's schedules, sometimes its detail or the next page,
 * now and then a 404 and a 400. By the time the first user arrives, the JIT has compiled the whole request path
 * (Jetty, filters, Spring MVC, both cache tiers, JDBC, Jackson) instead of compiling it on the users' time. The
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

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	/** Jetty's threads when {@code server.jetty.threads.max} is not set (Spring Boot's default). */
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
		Integer port = this.environment.getProperty("local.server.port", Integer.class);
		if (this.settings.getMaxDuration().isZero() || this.settings.getMaxDuration().isNegative() || port == null) {
			return;
		}
		Duration duration = duration();
		if (duration.isZero()) {
			logger.warn("Warm-up: none, the JVM started more than " + this.settings.getReadyWithin()
					+ " ago (concert-cache.warmup.ready-within); the JIT compiles on real traffic");
			return;
		}
		long started = System.nanoTime();
		long cpuStarted = processCpuNanos();
		RestClient http = restClient(baseUri(port));
		try (TieredCacheWarmup warmup = this.caches.openWarmup()) {
			this.filter.begin(warmup);
			try {
				this.result = new WarmupJourneys(http, warmup, this.settings.getMaxRate(), concurrency(),
						this.settings.getQuietCompilation())
					.run(started + duration.toNanos());
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
				+ " (" + ManagementFactory.getRuntimeMXBean().getUptime() + " ms after the JVM started)"
				+ ", " + String.format("%.1f", cpu / 1e9) + " s of CPU ("
				+ String.format("%.2f", (double) cpu / Math.max(1, done.took().toNanos())) + " cores)"
				+ "; the caches are as cold as before");
	}

	/**
	 * {@code max-duration}, or less so that it ends {@code ready-within} after the JVM started (its uptime counts
	 * the JVM's own start and the application's); zero when that has passed.
	 */
	private Duration duration() {
		Duration left = this.settings.getReadyWithin()
			.minusMillis(ManagementFactory.getRuntimeMXBean().getUptime());
		Duration duration = (left.compareTo(this.settings.getMaxDuration()) < 0) ? left : this.settings.getMaxDuration();
		return duration.isNegative() ? Duration.ZERO : duration;
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
				: this.environment.getProperty("server.jetty.threads.max", Integer.class, DEFAULT_SERVER_THREADS);
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

}
