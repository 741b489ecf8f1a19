package dev.concertcache.tiered;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the two-tier cache.
 */
@ConfigurationProperties("tiered-cache")
public class TieredCacheProperties {

	/**
	 * Which tiers serve reads: NONE calls the loader every time (the baseline), REDIS uses Redis only,
	 * TIERED uses Caffeine then Redis.
	 */
	private Mode mode = Mode.NONE;

	public Mode getMode() {
		return this.mode;
	}

	public void setMode(Mode mode) {
		this.mode = mode;
	}

	/** Which tiers serve reads. */
	public enum Mode {

		/** No caching: every read calls the loader. */
		NONE,

		/** Redis only, no in-process tier. */
		REDIS,

		/** Caffeine in process, then Redis. */
		TIERED

	}

}
