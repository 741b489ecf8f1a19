package dev.concertcache.api.web;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;

import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

import dev.concertcache.api.CachedApiTestSupport;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bytes allocated per request by the API's warm cached reads against the floor's (ADR 0203: a plain Spring MVC app
 * with Boot's defaults serving the same contract from memory, Jackson per request), measured in-process instead of
 * under the load runner (ADR 0201): the same journeys (a list page by cursor, a concert's detail, its
 * schedules; popularity skewed to the first concerts) sent one at a time over loopback HTTP/1.1 to each, warm, and
 * the bytes the server's threads (Jetty's for the API, Tomcat's for the floor) allocated divided by the requests. Allocation is
 * not time: counted on the threads that serve requests, the figure does not depend on the machine's load, so it can
 * be held to a bound. Only those threads are counted: the cache's background threads (lease renewals, stream reads)
 * allocate by the second, not by the request, and would make the figure depend on the machine's load.
 * L1 TTLs are long here so that every measured read is an L1 hit: the figure is the hit path's, not the revalidation's.
 */
@ActiveProfiles("cache")
// No binary-log reader: a confirmation late by more than max-lag on a busy machine sends reads past L1, and the
// figure is the hit path's, not what a stalled reader costs (ADR 0039).
@TestPropertySource(properties = { "tiered-cache.defaults.l1-ttl=5m", "concert-cache.capture.mode=off" })
class AllocationPerRequestTests extends CachedApiTestSupport {

	private static final int CONCERTS = 1000;

	private static final int PAGE_SIZE = 20;

	private static final int WARMUP_JOURNEYS = Integer.getInteger("allocation.warmup-journeys", 2000);

	private static final int JOURNEYS = Integer.getInteger("allocation.journeys", 800);

	private static final int ROUNDS = 3;

	/**
	 * The most a warm cached request may allocate, as a fraction of the floor's. Answered in front of the servlet
	 * context from bytes and header fields made once (ADR 0208), a cached hit allocates 0.24-0.29x the floor's
	 * request, which runs Spring MVC and Jackson: Jetty's parsing of the request (its URI and header values as
	 * strings) is most of it. Through Spring MVC it allocated about 1.15 times the floor's. The floor's own figure
	 * varies by about 0.8 KB between runs, so the bound leaves margin both ways.
	 */
	private static final double MAX_FRACTION_OF_FLOOR = Double
		.parseDouble(System.getProperty("allocation.max-fraction-of-floor", "0.4"));

	private static final JsonMapper json = JsonMapper.builder().build();

	/** Measures the cache while the test's thread measures the floor. */
	private final ExecutorService cacheMeasurement = executor("allocation-cache");

	private final ExecutorService cacheClient = executor("allocation-client-cache");

	private final ExecutorService floorClient = executor("allocation-client-floor");

	private final ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();

	@AfterEach
	void stopThreads() {
		this.cacheMeasurement.shutdownNow();
		this.cacheClient.shutdownNow();
		this.floorClient.shutdownNow();
	}

	/**
	 * The floor and the cache are measured at the same time, each by a client of its own: bytes counted on the
	 * servers' request threads do not depend on what else runs, and one request at a time leaves a core to the other.
	 */
	@Test
	void aWarmCachedReadAllocatesAFractionOfTheFloors() throws Exception {
		generate(CONCERTS);
		HttpClient toCache = client(this.cacheClient);
		Future<Map<String, Long>> measuringCache = this.cacheMeasurement
			.submit(() -> measure(toCache, this.port, this::serverBytes));
		Map<String, Long> floor;
		try (FloorProcess process = FloorProcess.start(CONCERTS, CURSOR_SECRET)) {
			floor = measure(client(this.floorClient), process.port(), process::allocatedBytes);
		}
		Map<String, Long> cache = measuringCache.get();
		StringBuilder report = new StringBuilder("bytes allocated per request (least of " + ROUNDS + " rounds)\n");
		report.append(String.format("%-8s %8s %8s %8s %8s%n", "", "journey", "list", "detail", "schedules"));
		row(report, "floor", floor);
		row(report, "cache", cache);
		report.append(String.format("cache - floor: %d bytes a journey request (%.2fx)%n",
				cache.get("journey") - floor.get("journey"), (double) cache.get("journey") / floor.get("journey")));
		System.out.print(report);
		for (String read : floor.keySet()) {
			assertThat(cache.get(read)).as(read + "\n" + report)
				.isLessThanOrEqualTo((long) (floor.get(read) * MAX_FRACTION_OF_FLOOR));
		}
	}

	private static void row(StringBuilder report, String name, Map<String, Long> perRequest) {
		report.append(String.format("%-8s %8d %8d %8d %8d%n", name, perRequest.get("journey"), perRequest.get("list"),
				perRequest.get("detail"), perRequest.get("schedules")));
	}

	private static ExecutorService executor(String thread) {
		return Executors.newSingleThreadExecutor((task) -> new Thread(task, thread));
	}

	/** HTTP/1.1, its work on {@code executor}'s thread; the callers send one request at a time. */
	private static HttpClient client(ExecutorService executor) {
		return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor).build();
	}

	/** Warms {@code port}'s server, then its bytes per request: the journey's, and each read's alone. */
	private static Map<String, Long> measure(HttpClient client, int port, LongSupplier allocated) {
		List<String> cursors = cursors(client, port);
		List<String> warmup = journeys(cursors, WARMUP_JOURNEYS, 1);
		sendAll(client, port, warmup);
		sendAll(client, port, warmup);
		List<String> measured = journeys(cursors, JOURNEYS, 2);
		Map<String, Long> perRequest = new LinkedHashMap<>();
		perRequest.put("journey", leastPerRequest(client, port, measured, allocated));
		perRequest.put("list", leastPerRequest(client, port, only(measured, 0), allocated));
		perRequest.put("detail", leastPerRequest(client, port, only(measured, 1), allocated));
		perRequest.put("schedules", leastPerRequest(client, port, only(measured, 2), allocated));
		return perRequest;
	}

	private static long leastPerRequest(HttpClient client, int port, List<String> paths, LongSupplier allocated) {
		long least = Long.MAX_VALUE;
		for (int round = 0; round < ROUNDS; round++) {
			long before = allocated.getAsLong();
			sendAll(client, port, paths);
			least = Math.min(least, (allocated.getAsLong() - before) / paths.size());
		}
		return least;
	}

	/** The cursor of every page of the list ({@code ""} for the first), walked as a client does. */
	private static List<String> cursors(HttpClient client, int port) {
		List<String> cursors = new ArrayList<>(List.of(""));
		while (cursors.size() < CONCERTS / PAGE_SIZE) {
			byte[] body = send(client, port, listPath(cursors.get(cursors.size() - 1))).body();
			cursors.add(json.readTree(body).get("nextCursor").asString());
		}
		return cursors;
	}

	/**
	 * Journeys as {@code loadtests/lib/journey.js} makes them: a concert by skewed popularity, the list page that
	 * shows it, its detail, its schedules.
	 */
	private static List<String> journeys(List<String> cursors, int journeys, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		List<String> paths = new ArrayList<>(journeys * 3);
		for (int i = 0; i < journeys; i++) {
			long id = 1 + (long) (CONCERTS * Math.pow(random.nextDouble(), 3));
			paths.add(listPath(cursors.get((int) ((id - 1) / PAGE_SIZE))));
			paths.add("/api/concerts/" + id);
			paths.add("/api/concerts/" + id + "/schedules");
		}
		return paths;
	}

	private static List<String> only(List<String> journeys, int step) {
		List<String> paths = new ArrayList<>(journeys.size() / 3);
		for (int i = step; i < journeys.size(); i += 3) {
			paths.add(journeys.get(i));
		}
		return paths;
	}

	private static String listPath(String cursor) {
		return cursor.isEmpty() ? "/api/concerts?size=" + PAGE_SIZE
				: "/api/concerts?cursor=" + cursor + "&size=" + PAGE_SIZE;
	}

	private static void sendAll(HttpClient client, int port, List<String> paths) {
		for (String path : paths) {
			HttpResponse<byte[]> response = send(client, port, path);
			if (response.statusCode() != 200) {
				throw new IllegalStateException(path + " answered " + response.statusCode());
			}
		}
	}

	private static HttpResponse<byte[]> send(HttpClient client, int port, String path) {
		try {
			return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
					BodyHandlers.ofByteArray());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Bytes allocated by this JVM's request threads. */
	private long serverBytes() {
		return FloorProcess.requestThreadBytes(this.threads, FloorProcess.JETTY_THREADS);
	}

}
