package dev.concertcache.api;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the concert API.
 */
@ConfigurationProperties("concert-cache")
public class ApiProperties {

	/** Default of {@code concert-cache.warmup.max-duration}. */
	public static final Duration DEFAULT_WARMUP_MAX_DURATION = Duration.ofSeconds(90);

	/**
	 * Default of {@code concert-cache.warmup.ready-within}: the 25 s from JVM start to ready that ADR 0202 aims at,
	 * less what the hot-set fill and a readiness probe's interval may add after the warm-up.
	 */
	public static final Duration DEFAULT_WARMUP_READY_WITHIN = Duration.ofSeconds(20);

	/** Default of {@code concert-cache.warmup.quiet-compilation}. */
	public static final Duration DEFAULT_WARMUP_QUIET_COMPILATION = Duration.ofMillis(100);

	/**
	 * Default of {@code concert-cache.warmup.max-rate}: under a third of what a warm instance served on two cores
	 * (7,250 requests/s, ADR 0202), so that a joining instance leaves the instances beside it most of the CPU once
	 * its code is compiled; not tuned by a measurement yet.
	 */
	public static final int DEFAULT_WARMUP_MAX_RATE = 2000;

	/**
	 * Default of {@code concert-cache.list.block-size}: the largest page size, so that a page of dense ids spans at
	 * most two blocks.
	 */
	public static final int DEFAULT_LIST_BLOCK_SIZE = 100;

	/** Default of {@code concert-cache.http.concert-max-age}. */
	public static final Duration DEFAULT_CONCERT_MAX_AGE = Duration.ofSeconds(1);

	/** Default of {@code concert-cache.http.concert-page-max-age}. */
	public static final Duration DEFAULT_CONCERT_PAGE_MAX_AGE = Duration.ofSeconds(1);

	/** Default of {@code concert-cache.http.schedules-max-age}: revalidate every time. */
	public static final Duration DEFAULT_SCHEDULES_MAX_AGE = Duration.ZERO;

	/** Default of {@code concert-cache.http.accept-queue-size}. */
	public static final int DEFAULT_ACCEPT_QUEUE_SIZE = 1000;

	/**
	 * Bearer token that write requests must present. Unset means every write is refused.
	 */
	private String adminToken;

	/**
	 * Key that signs list cursors, so that a client cannot forge or alter one. All instances behind one
	 * load balancer must share it. No default: the service refuses to start without one, except under the
	 * {@code dev} profile.
	 */
	private String cursorSecret;

	/** The JIT warm-up before the instance reports ready (ADR 0202). */
	private final Warmup warmup = new Warmup();

	/** HTTP caching of cached reads (ADR 0034). */
	private final Http http = new Http();

	/** The concert list in the cache (ADR 0036). */
	private final ConcertList list = new ConcertList();

	public String getAdminToken() {
		return this.adminToken;
	}

	public void setAdminToken(String adminToken) {
		this.adminToken = adminToken;
	}

	public String getCursorSecret() {
		return this.cursorSecret;
	}

	public void setCursorSecret(String cursorSecret) {
		this.cursorSecret = cursorSecret;
	}

	public Warmup getWarmup() {
		return this.warmup;
	}

	public Http getHttp() {
		return this.http;
	}

	public ConcertList getList() {
		return this.list;
	}

	/**
	 * The concert list in the cache (ADR 0036): cached as blocks of consecutive ids, so that a write of one concert
	 * makes stale the one block that holds its id, and a page is put together from the blocks it spans.
	 */
	public static class ConcertList {

		/**
		 * Ids per cached block: concert ids 1 to block-size are the first block. A page walks at most 16 blocks
		 * (gaps of deleted ids included) before it reads the database directly; raise it where ids are sparse.
		 */
		private int blockSize = DEFAULT_LIST_BLOCK_SIZE;

		public int getBlockSize() {
			return this.blockSize;
		}

		public void setBlockSize(int blockSize) {
			this.blockSize = blockSize;
		}

	}

	/**
	 * HTTP caching of cached reads (ADR 0034): how long a client or a shared cache may reuse a response without
	 * asking again. Whole seconds; 0 sends {@code no-cache} (store, but revalidate with {@code If-None-Match} every
	 * time, answered 304 when unchanged). Whatever is set here adds to the freshness contract's 1 s for clients that
	 * reuse a response, so keep it small, and within the cache's {@code l1-ttl}.
	 */
	public static class Http {

		/** {@code max-age} of a concert ({@code GET /api/concerts/{id}}). */
		private Duration concertMaxAge = DEFAULT_CONCERT_MAX_AGE;

		/** {@code max-age} of a list page ({@code GET /api/concerts}). */
		private Duration concertPageMaxAge = DEFAULT_CONCERT_PAGE_MAX_AGE;

		/**
		 * {@code max-age} of a concert's schedules: seat counts, what a buyer acts on, so revalidated every time by
		 * default.
		 */
		private Duration schedulesMaxAge = DEFAULT_SCHEDULES_MAX_AGE;

		/**
		 * Connections the kernel queues for the public port's acceptor (the listen backlog; Jetty's own default
		 * leaves the JVM's 50): 1000 users opening connections in the same second fit even if the acceptor stalls
		 * (GC). Linux caps it at {@code net.core.somaxconn} (4096).
		 */
		private int acceptQueueSize = DEFAULT_ACCEPT_QUEUE_SIZE;

		public Duration getConcertMaxAge() {
			return this.concertMaxAge;
		}

		public void setConcertMaxAge(Duration concertMaxAge) {
			this.concertMaxAge = concertMaxAge;
		}

		public Duration getConcertPageMaxAge() {
			return this.concertPageMaxAge;
		}

		public void setConcertPageMaxAge(Duration concertPageMaxAge) {
			this.concertPageMaxAge = concertPageMaxAge;
		}

		public Duration getSchedulesMaxAge() {
			return this.schedulesMaxAge;
		}

		public void setSchedulesMaxAge(Duration schedulesMaxAge) {
			this.schedulesMaxAge = schedulesMaxAge;
		}

		public int getAcceptQueueSize() {
			return this.acceptQueueSize;
		}

		public void setAcceptQueueSize(int acceptQueueSize) {
			this.acceptQueueSize = acceptQueueSize;
		}

	}

	/**
	 * The JIT warm-up before the instance reports ready (ADR 0202).
	 */
	public static class Warmup {

		/**
		 * Longest the instance replays the read journey against itself, over loopback HTTP, before it reports
		 * ready; the caches stay cold. It stops earlier once the JIT has settled. 0 turns the warm-up off.
		 */
		private Duration maxDuration = DEFAULT_WARMUP_MAX_DURATION;

		/**
		 * The warm-up ends at the latest this long after the JVM started, however long the start took before it, so
		 * that the instance reports ready within about this; the JIT finishes what is left on real traffic.
		 */
		private Duration readyWithin = DEFAULT_WARMUP_READY_WITHIN;

		/**
		 * The JIT counts as settled when, over the last five seconds, it spent less than this much time compiling
		 * per second.
		 */
		private Duration quietCompilation = DEFAULT_WARMUP_QUIET_COMPILATION;

		/**
		 * Warm-up requests in flight at a time. Unset: as many as the server has request threads
		 * ({@code server.jetty.threads.max}), so that the warm-up grows the thread pool as real traffic does and
		 * that code is compiled before readiness too.
		 */
		private @Nullable Integer concurrency;

		/**
		 * Most warm-up requests per second, every thread together; 0 for no limit. Bounds the CPU a starting
		 * instance takes from the instances already serving beside it.
		 */
		private int maxRate = DEFAULT_WARMUP_MAX_RATE;

		public int getMaxRate() {
			return this.maxRate;
		}

		public void setMaxRate(int maxRate) {
			this.maxRate = maxRate;
		}

		public Duration getMaxDuration() {
			return this.maxDuration;
		}

		public void setMaxDuration(Duration maxDuration) {
			this.maxDuration = maxDuration;
		}

		public Duration getReadyWithin() {
			return this.readyWithin;
		}

		public void setReadyWithin(Duration readyWithin) {
			this.readyWithin = readyWithin;
		}

		public Duration getQuietCompilation() {
			return this.quietCompilation;
		}

		public void setQuietCompilation(Duration quietCompilation) {
			this.quietCompilation = quietCompilation;
		}

		public @Nullable Integer getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(@Nullable Integer concurrency) {
			this.concurrency = concurrency;
		}

	}

}
