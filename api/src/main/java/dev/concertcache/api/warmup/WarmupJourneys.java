package dev.concertcache.api.warmup;

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

import org.springframework.util.StreamUtils;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

import dev.concertcache.api.concert.ConcertPage;
import dev.concertcache.api.concert.ConcertSummary;
import dev.concertcache.tiered.TieredCacheWarmup;

/**
 * One warm-up run: walks the first list pages for ids, then replays the read journey on {@code threads} threads
 * (list page, schedules, sometimes the detail or the next page, now and then a 404 and a 400) until the JIT settles
 * or the deadline passes. Every {@link #COOLING_INTERVAL} it makes the cache twins cold again (ADR 0202).
 */
final class WarmupJourneys {

	/** List pages walked for ids to read; the journey then picks among them. */
	private static final int PAGES = 100;

	private static final int PAGE_SIZE = 20;

	/**
	 * How often the warm-up drops what its twin caches hold in L1, so that reads go to Redis again; every
	 * {@link #REDIS_COOLING_EVERY}th time their Redis keys too, so that reads load again. A cold instance takes those
	 * paths for minutes; a warm-up whose twins stayed warm after its first seconds left them to the JIT on real
	 * traffic (ADR 0202: 808 C2 compilations in the first 30 s after readiness).
	 */
	private static final Duration COOLING_INTERVAL = Duration.ofSeconds(2);

	private static final int REDIS_COOLING_EVERY = 5;

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

	private final int threads;

	private final Duration quietCompilation;

	/**
	 * @param http the application's client, pointed at this instance, every request carrying the warm-up's token
	 * @param warmup the caches' warm-up, cooled every {@link #COOLING_INTERVAL}
	 * @param maxRate most requests per second over every thread, 0 for no limit
	 * @param threads requests kept in flight
	 * @param quietCompilation compile time per second under which the JIT counts as settled
	 */
	WarmupJourneys(RestClient http, TieredCacheWarmup warmup, int maxRate, int threads, Duration quietCompilation) {
		this.http = http;
		this.warmup = warmup;
		this.nanosPerRequest = (maxRate > 0) ? TimeUnit.SECONDS.toNanos(1) / maxRate : 0;
		this.threads = threads;
		this.quietCompilation = quietCompilation;
	}

	WarmupRunner.Result run(long deadline) throws Exception {
		long started = System.nanoTime();
		walkPages(deadline);
		ExecutorService executor = Executors.newFixedThreadPool(this.threads, (task) -> {
			Thread thread = new Thread(task, "warmup");
			thread.setDaemon(true);
			return thread;
		});
		try {
			List<Future<?>> running = new ArrayList<>();
			for (int i = 0; i < this.threads; i++) {
				running.add(executor.submit(this::loop));
			}
			boolean settled = new JitSettling(this.quietCompilation).await(deadline);
			this.stopped = true;
			for (Future<?> future : running) {
				future.get();
			}
			return new WarmupRunner.Result(this.requests.get(), this.failed.get(),
					Duration.ofNanos(System.nanoTime() - started), settled, this.threads);
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
