package dev.concertcache.tiered.spring;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * One cache's totals for Micrometer's {@code cache.*} meters, read from the per-tier meters the tiers record
 * ({@code tiered.cache.*}, ADR 0015) in the registry they record them in; zero without one.
 * <ul>
 * <li>hits: reads a tier answered ({@code tiered.cache.gets{result="hit"}}, L1 and L2);</li>
 * <li>misses: reads that needed the loader: its calls ({@code tiered.cache.loads}, failures included) and the
 * calls its breaker or bulkhead refused ({@code tiered.cache.loads.rejected});</li>
 * <li>puts: loads that gave a value to store, found or absent ({@code tiered.cache.loads{result!="failure"}});</li>
 * <li>evictions: L1 entries removed, whatever the cause ({@code tiered.cache.evictions{tier="l1"}}), or in REDIS
 * mode explicit evictions ({@code tier="l2"});</li>
 * <li>size: L1 entries ({@code tiered.cache.size{tier="l1"}}); unknown in REDIS mode.</li>
 * </ul>
 */
final class TieredCacheCounts {

	private final @Nullable MeterRegistry registry;

	private final String cache;

	TieredCacheCounts(@Nullable MeterRegistry registry, String cache) {
		this.registry = registry;
		this.cache = cache;
	}

	long hits() {
		return counters("tiered.cache.gets", "result", "hit");
	}

	long misses() {
		if (this.registry == null) {
			return 0;
		}
		long loads = 0;
		for (Timer timer : this.registry.find("tiered.cache.loads").tag("cache", this.cache).timers()) {
			loads += timer.count();
		}
		return loads + counters("tiered.cache.loads.rejected", null, null);
	}

	long puts() {
		if (this.registry == null) {
			return 0;
		}
		long puts = 0;
		for (Timer timer : this.registry.find("tiered.cache.loads").tag("cache", this.cache).timers()) {
			if (!"failure".equals(timer.getId().getTag("result"))) {
				puts += timer.count();
			}
		}
		return puts;
	}

	long evictions() {
		return counters("tiered.cache.evictions", "tier", hasL1() ? "l1" : "l2");
	}

	/** L1 entries, or {@code null} without an L1 (REDIS mode) or without a registry. */
	@Nullable Long size() {
		Gauge gauge = l1Size();
		return (gauge != null) ? (long) gauge.value() : null;
	}

	private boolean hasL1() {
		return l1Size() != null;
	}

	private @Nullable Gauge l1Size() {
		return (this.registry != null)
				? this.registry.find("tiered.cache.size").tag("cache", this.cache).tag("tier", "l1").gauge() : null;
	}

	private long counters(String name, @Nullable String tag, @Nullable String value) {
		if (this.registry == null) {
			return 0;
		}
		var search = this.registry.find(name).tag("cache", this.cache);
		if (tag != null && value != null) {
			search = search.tag(tag, value);
		}
		double total = 0;
		for (Counter counter : search.counters()) {
			total += counter.count();
		}
		for (FunctionCounter counter : search.functionCounters()) {
			total += counter.count();
		}
		return (long) total;
	}

}
