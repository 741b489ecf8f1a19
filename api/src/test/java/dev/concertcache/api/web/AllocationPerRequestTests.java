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
 * the bytes the server's request threads (Tomcat's, in either JVM) allocated divided by the requests. Allocation is
 * not time: counted on the threads that serve requests, the figure does not depend on the machine's load, so it can
 * be held to a bound. Only those threads are counted: the cache's background threads (lease renewals, stream reads)
 * allocate by the second, not by the request, and would make the figure depend on the machine's load.
 * L1 TTLs are long here so that every measured read is an L1 hit: the figure is the hit path's, not the revalidation's.
 */
@ActiveProfiles("cache")
// No binary-log reader: a confirmation late by more than max-lag on a busy machine sends reads past L1, and the
// figure is the hit path's, not what a stalled reader costs (ADR 0037).
@TestPropertySource(properties = { "tiered-cache.defaults.l1-ttl=5m", "concert-cache.capture.mode=off" })
class AllocationPerRequestTests extends CachedApiTestSupport {

	private static final int CONCERTS = 1000;

	private static final int PAGE_SIZE = 20;

	private static final int WARMUP_JOURNEYS = Integer.getInteger("allocation.warmup-journeys", 2000);

	private static final int JOURNEYS = Integer.getInteger("allocation.journeys", 800);

	private static final int ROUNDS = 3;

	/**
	 * The most a warm cached request may allocate, as a fraction of the floor's. Answered in Tomcat's pipeline from
	 * bytes and headers made once (ADR 0205), a cached hit allocates about a tenth of the floor's request, which
	 * runs Spring MVC and Jackson; through Spring MVC it allocated about 1.15 times the floor's. Rounds agree within
	 * about 0.6 KB and the floor's own figure varies by about 0.8 KB between runs, so a quarter leaves margin both
	 * ways.
	 */
	private static final double MAX_FRACTION_OF_FLOOR = Double
		.parseDouble(System.getProperty("allocation.max-fraction-of-floor", "0.25"));

	private static final JsonMapper json = JsonMapper.builder().build();

	private final ExecutorService clientExecutor = Executors
		.newSingleThreadExecutor((task) -> new Thread(task, "allocation-client"));

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.executor(this.clientExecutor)
		.build();

	private final ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();

	@AfterEach
	void stopClient() {
		this.clientExecutor.shutdownNow();
	}

	@Test
	void aWarmCachedReadAllocatesAFractionOfTheFloors() throws IOException {
		generate(CONCERTS);
		Map<String, Long> floor;
		try (FloorProcess process = FloorProcess.start(CONCERTS, CURSOR_SECRET)) {
			floor = measure(process.port(), process::allocatedBytes);
		}
		Map<String, Long> cache = measure(this.port, this::serverBytes);
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

	/** Warms {@code port}'s server, then its bytes per request: the journey's, and each read's alone. */
	private Map<String, Long> measure(int port, LongSupplier allocated) {
		List<String> cursors = cursors(port);
		List<String> warmup = journeys(cursors, WARMUP_JOURNEYS, 1);
		sendAll(port, warmup);
		sendAll(port, warmup);
		List<String> measured = journeys(cursors, JOURNEYS, 2);
		Map<String, Long> perRequest = new LinkedHashMap<>();
		perRequest.put("journey", leastPerRequest(port, measured, allocated));
		perRequest.put("list", leastPerRequest(port, only(measured, 0), allocated));
		perRequest.put("detail", leastPerRequest(port, only(measured, 1), allocated));
		perRequest.put("schedules", leastPerRequest(port, only(measured, 2), allocated));
		return perRequest;
	}

	private long leastPerRequest(int port, List<String> paths, LongSupplier allocated) {
		long least = Long.MAX_VALUE;
		for (int round = 0; round < ROUNDS; round++) {
			long before = allocated.getAsLong();
			sendAll(port, paths);
			least = Math.min(least, (allocated.getAsLong() - before) / paths.size());
		}
		return least;
	}

	/** The cursor of every page of the list ({@code ""} for the first), walked as a client does. */
	private List<String> cursors(int port) {
		List<String> cursors = new ArrayList<>(List.of(""));
		while (cursors.size() < CONCERTS / PAGE_SIZE) {
			byte[] body = send(port, listPath(cursors.get(cursors.size() - 1))).body();
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

	private void sendAll(int port, List<String> paths) {
		for (String path : paths) {
			HttpResponse<byte[]> response = send(port, path);
			if (response.statusCode() != 200) {
				throw new IllegalStateException(path + " answered " + response.statusCode());
			}
		}
	}

	private HttpResponse<byte[]> send(int port, String path) {
		try {
			return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
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
		return FloorProcess.requestThreadBytes(this.threads);
	}

}
