package dev.concertcache.tiered;

/**
 * Which tiers serve reads.
 *
 * @author concert-cache
 */
public enum TieredCacheMode {

	/** No caching: every read calls the loader. */
	NONE,

	/** Redis only, no in-process tier. */
	REDIS,

	/** Caffeine in process, then Redis. */
	TIERED

}
