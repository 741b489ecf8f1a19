package dev.concertcache.api.cache;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.ActiveProfiles;

import dev.concertcache.api.CachedApiTestSupport;
import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.TieredCacheMode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The API under the {@code redis-only} profile (the seed 004 approach, for the load-test comparison): repeated
 * reads are Redis hits and cost no query; nothing is held in process.
 */
@ActiveProfiles("redis-only")
class RedisOnlyReadsTests extends CachedApiTestSupport {

	private static final List<String> READS = List.of("/api/concerts/5", "/api/concerts?size=10",
			"/api/concerts/5/schedules");

	@Autowired
	private MeterRegistry meters;

	@Test
	void repeatedReadsAreRedisHitsWithoutQueries() {
		assertThat(((DefaultTieredCacheManager) this.caches).getMode()).isEqualTo(TieredCacheMode.REDIS);
		READS.forEach(this::get);
		double hits = count("l2", "hit");
		long selects = selectsExecuted();
		for (int round = 0; round < 5; round++) {
			READS.forEach((path) -> assertThat(get(path).status()).isEqualTo(200));
		}
		assertThat(selectsExecuted() - selects).isZero();
		// Per round: the concert, the page's end of the list and its block (ADR 0036), the schedules.
		assertThat(count("l2", "hit") - hits).isEqualTo(20);
		assertThat(count("l1", "hit") + count("l1", "miss")).isZero();
	}

	private double count(String tier, String result) {
		return this.meters.find("tiered.cache.gets").tags("tier", tier, "result", result).functionCounters().stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

}
