package dev.concertcache.tiered.hotset;

import java.time.Duration;

/**
 * The immutable settings of the hot set (ADR 0202): every instance publishes the keys of its L1's hottest
 * entries per cache to Redis, and an instance that starts fills its L1 from them, through the normal Redis read,
 * before it reports ready. Changed with withers: {@code HotSetConfiguration.defaultConfig().withSize(500)}.
 *
 * @param publishInterval interval at which an instance publishes its hottest keys; the published set expires after
 * {@value #TTL_INTERVALS} intervals without a publish
 * @param size number of hottest keys per cache an instance publishes, the most the shared set keeps and the most a
 * fill reads into one cache; 0 turns publishing and filling off
 * @param fillTimeout longest a fill takes, all caches together; past it the instance gives up and is ready with
 * what it filled
 */
public record HotSetConfiguration(Duration publishInterval, int size, Duration fillTimeout) {

	/** Default interval between publishes of an instance's hottest keys. */
	public static final Duration DEFAULT_PUBLISH_INTERVAL = Duration.ofSeconds(30);

	/** Default number of hottest keys per cache. */
	public static final int DEFAULT_SIZE = 1000;

	/** Default time budget of a fill. */
	public static final Duration DEFAULT_FILL_TIMEOUT = Duration.ofSeconds(5);

	/** Publish intervals after which a set nobody published again expires. */
	public static final int TTL_INTERVALS = 3;

	/** Keys per Redis round trip of a fill (one MGET). */
	static final int FILL_BATCH = 100;

	private static final HotSetConfiguration DEFAULT = new HotSetConfiguration(DEFAULT_PUBLISH_INTERVAL,
			DEFAULT_SIZE, DEFAULT_FILL_TIMEOUT);

	/** The defaults. */
	public static HotSetConfiguration defaultConfig() {
		return DEFAULT;
	}

	public HotSetConfiguration withPublishInterval(Duration publishInterval) {
		return new HotSetConfiguration(publishInterval, this.size, this.fillTimeout);
	}

	public HotSetConfiguration withSize(int size) {
		return new HotSetConfiguration(this.publishInterval, size, this.fillTimeout);
	}

	public HotSetConfiguration withFillTimeout(Duration fillTimeout) {
		return new HotSetConfiguration(this.publishInterval, this.size, fillTimeout);
	}

	/** Whether instances publish and fill at all. */
	public boolean enabled() {
		return this.size > 0;
	}

	/**
	 * Checks that the settings make sense.
	 * @throws IllegalStateException naming the property otherwise
	 */
	public HotSetConfiguration validate(String where) {
		if (this.publishInterval == null || this.publishInterval.isNegative() || this.publishInterval.isZero()) {
			throw new IllegalStateException(where + ".publish-interval must be positive, was " + this.publishInterval);
		}
		if (this.size < 0) {
			throw new IllegalStateException(where + ".size must be zero (off) or positive, was " + this.size);
		}
		if (this.fillTimeout == null || this.fillTimeout.isNegative()) {
			throw new IllegalStateException(where + ".fill-timeout must not be negative, was " + this.fillTimeout);
		}
		return this;
	}

}
