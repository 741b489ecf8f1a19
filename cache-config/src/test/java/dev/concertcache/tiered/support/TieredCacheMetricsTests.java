package dev.concertcache.tiered.support;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import dev.concertcache.tiered.metrics.TieredCacheMetrics;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The meters of the cache, registered once per cache.
 */
class TieredCacheMetricsTests {

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final TieredCacheMetrics metrics = new TieredCacheMetrics(this.registry);

	@Test
	void readsCountedThroughEveryHandleOnACacheAreReportedTogether() {
		// The manager asks for a cache's meters more than once (the cache, its transaction-aware decorator).
		this.metrics.forCache("items").l1Hit.increment();
		this.metrics.forCache("items").l1Hit.increment();

		assertThat(this.registry.get("tiered.cache.gets")
			.tags("cache", "items", "tier", "l1", "result", "hit")
			.functionCounter()
			.count()).isEqualTo(2);
	}

}
