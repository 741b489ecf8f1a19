package dev.concertcache.testsupport;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;

/** Meters read as tests assert them. */
public final class Meters {

	private Meters() {
	}

	/**
	 * The sum of every counter named {@code name} with {@code tags}: counters and function counters alike, as the
	 * cache reports per-read counts through function counters over adders and the rest through counters.
	 */
	public static double count(MeterRegistry registry, String name, String... tags) {
		Search search = registry.find(name).tags(tags);
		return search.counters().stream().mapToDouble(Counter::count).sum()
				+ search.functionCounters().stream().mapToDouble(FunctionCounter::count).sum();
	}

}
