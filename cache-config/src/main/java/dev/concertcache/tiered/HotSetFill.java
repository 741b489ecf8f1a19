package dev.concertcache.tiered;

import java.time.Duration;

/**
 * What one fill of L1 from the hot set did (see {@link dev.concertcache.tiered.TieredCacheManager#fillHotSet()}).
 *
 * @param published the hot keys read from Redis, every cache together
 * @param filled the entries put into L1: fresh values Redis held under the current generation and shape
 * @param took how long the fill took
 * @param complete whether it went through every key, rather than stopping at the fill timeout or a Redis failure
 * @author concert-cache
 */
public record HotSetFill(int published, int filled, Duration took, boolean complete) {

	/** The fill of a manager that has no L1, or whose hot set is off. */
	public static final HotSetFill NONE = new HotSetFill(0, 0, Duration.ZERO, true);

}
