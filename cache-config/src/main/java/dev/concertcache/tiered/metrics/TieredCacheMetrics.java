package dev.concertcache.tiered.metrics;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.concertcache.tiered.loader.LoadRejectedException;

/**
 * The cache's meters: ADR 0015 lists them and what each counts (the hot set's are ADR 0202's, the feed's ADR 0039's).
 */
public final class TieredCacheMetrics {

	public static final String ALL_CACHES = "*";

	private final MeterRegistry registry;

	private final Timer lag;

	/** One per cache: its read counts are adders that a second set of function counters would not report. */
	private final ConcurrentMap<String, ForCache> caches = new ConcurrentHashMap<>();

	public TieredCacheMetrics(MeterRegistry registry) {
		this.registry = registry;
		this.lag = Timer.builder("tiered.cache.invalidation.lag")
			.description("Time from an invalidation's send to its receipt by another instance")
			.publishPercentileHistogram()
			.maximumExpectedValue(Duration.ofSeconds(10))
			.register(registry);
	}

	/** The meters of {@code cache}, the same instance however often asked for. */
	public ForCache forCache(String cache) {
		return this.caches.computeIfAbsent(cache, ForCache::new);
	}

	public void lag(long millis) {
		this.lag.record(Math.max(0, millis), TimeUnit.MILLISECONDS);
	}

	/** A failed Redis call or an unreadable value; a call an open breaker refused is none (resilience4j counts it). */
	public void error(String cache, String operation) {
		this.registry.counter("tiered.cache.errors", "cache", cache, "tier", "l2", "operation", operation).increment();
	}

	/** A fill of L1 from the hot set: {@code tiered.cache.hot.set.fill{complete}} (a timer). */
	public void hotSetFill(long nanos, boolean complete) {
		Timer.builder("tiered.cache.hot.set.fill")
			.description("Fills of L1 from the fleet's hot set, before the instance is ready")
			.tag("complete", String.valueOf(complete))
			.register(this.registry)
			.record(nanos, TimeUnit.NANOSECONDS);
	}

	/** Entries a fill put into the L1 of {@code cache}: {@code tiered.cache.hot.set.filled{cache}}. */
	public void hotSetFilled(String cache, long entries) {
		Counter.builder("tiered.cache.hot.set.filled")
			.description("Entries put into L1 from the fleet's hot set")
			.tag("cache", cache)
			.register(this.registry)
			.increment(entries);
	}

	public void pendingEvictions(Supplier<Number> size) {
		Gauge.builder("tiered.cache.pending.evictions", size)
			.description("Evictions waiting for Redis to be reachable again")
			.register(this.registry);
	}

	/** A failover or new primary whose generations this instance moved: {@code tiered.cache.failovers}. */
	public void failoverHandled() {
		this.registry.counter("tiered.cache.failovers").increment();
	}

	/** The meters of one cache. */
	public final class ForCache {

		private final String cache;

		// Reads are counted in adders that function counters report: the read path calls the same final class
		// whatever the registry (a warm-up's twins count in a SimpleMeterRegistry, ADR 0202), so the code the JIT
		// compiles during the warm-up is not thrown away at the first real read for a counter of another class.
		public final LongAdder l1Hit;

		public final LongAdder l1Miss;

		public final LongAdder l2Hit;

		public final LongAdder l2Miss;

		public final Counter sent;

		public final Counter received;

		public final Counter staleServed;

		/** Reads sent to the loader past both tiers because the change feed was behind (ADR 0039). */
		public final Counter feedBehind;

		/** Redis reads of refresh-ahead (ADR 0204): not reads of a caller, so not in {@code tiered.cache.gets}. */
		public final LongAdder refreshHit;

		public final LongAdder refreshMiss;

		private final Timer loadSuccess;

		private final Timer loadAbsent;

		private final Timer loadFailure;

		private ForCache(String cache) {
			this.cache = cache;
			this.l1Hit = gets("l1", "hit");
			this.l1Miss = gets("l1", "miss");
			this.l2Hit = gets("l2", "hit");
			this.l2Miss = gets("l2", "miss");
			this.loadSuccess = loads("success");
			this.loadAbsent = loads("absent");
			this.loadFailure = loads("failure");
			this.sent = counter("tiered.cache.invalidations.sent", "Invalidation messages this instance sent");
			this.received = counter("tiered.cache.invalidations.received",
					"Invalidation messages from other instances this instance applied");
			this.staleServed = counter("tiered.cache.stale.served",
					"Reads answered with an expired value because the loader failed");
			this.feedBehind = counter("tiered.cache.feed.behind.reads",
					"Reads past L1 because the change feed had not confirmed recently enough that both tiers hold "
							+ "every committed change: Redis answers them only with values read within max-lag");
			this.refreshHit = refreshes("hit");
			this.refreshMiss = refreshes("miss");
			for (LoadRejectedException.Reason reason : LoadRejectedException.Reason.values()) {
				rejected(reason);
			}
		}

		public Counter rejected(LoadRejectedException.Reason reason) {
			return counter("tiered.cache.loads.rejected",
					"Misses whose loader call the circuit breaker or the bulkhead refused", "reason", reason.tag());
		}

		public void load(long nanos, String result) {
			Timer timer = switch (result) {
				case "success" -> this.loadSuccess;
				case "absent" -> this.loadAbsent;
				default -> this.loadFailure;
			};
			timer.record(nanos, TimeUnit.NANOSECONDS);
		}

		public void eviction(String tier, String cause) {
			TieredCacheMetrics.this.registry
				.counter("tiered.cache.evictions", "cache", this.cache, "tier", tier, "cause", cause)
				.increment();
		}

		public void error(String operation) {
			TieredCacheMetrics.this.error(this.cache, operation);
		}

		public <T> void l1Size(T cache, java.util.function.ToDoubleFunction<T> size) {
			Gauge.builder("tiered.cache.size", cache, size)
				.description("Entries in the in-process tier")
				.tag("cache", this.cache)
				.tag("tier", "l1")
				.register(TieredCacheMetrics.this.registry);
		}

		private LongAdder refreshes(String result) {
			return adder("tiered.cache.l1.refreshes",
					"L1 entries read again before they expired (refresh-ahead), by whether Redis had them", "result",
					result);
		}

		private LongAdder gets(String tier, String result) {
			return adder("tiered.cache.gets", "Cache reads by tier and result", "tier", tier, "result", result);
		}

		/** A count of this cache that a function counter reports; {@code tags} as name and value pairs. */
		private LongAdder adder(String name, String description, String... tags) {
			LongAdder count = new LongAdder();
			FunctionCounter.builder(name, count, LongAdder::doubleValue)
				.description(description)
				.tag("cache", this.cache)
				.tags(tags)
				.register(TieredCacheMetrics.this.registry);
			return count;
		}

		/** A counter of this cache; {@code tags} as name and value pairs. */
		private Counter counter(String name, String description, String... tags) {
			return Counter.builder(name)
				.description(description)
				.tag("cache", this.cache)
				.tags(tags)
				.register(TieredCacheMetrics.this.registry);
		}

		private Timer loads(String result) {
			return Timer.builder("tiered.cache.loads")
				.description("Loader (database) calls after a miss in every tier")
				.tag("cache", this.cache)
				.tag("result", result)
				.publishPercentileHistogram()
				.register(TieredCacheMetrics.this.registry);
		}

	}

}
