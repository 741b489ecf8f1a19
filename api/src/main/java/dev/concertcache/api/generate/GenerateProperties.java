package dev.concertcache.api.generate;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Size and seed of the generated data set.
 */
@ConfigurationProperties("concert-cache.generate")
public class GenerateProperties {

	/** Default number of concerts: a few thousand, enough for a skewed load test. */
	public static final int DEFAULT_CONCERTS = 5_000;

	/** Default seed; the same seed and size always give the same rows. */
	public static final long DEFAULT_SEED = 42;

	/**
	 * Number of concerts to create; schedules are about 2.2 per concert, the seeds' ratio (1.5 million
	 * concerts, 3.3 million schedules).
	 */
	private int concerts = DEFAULT_CONCERTS;

	/**
	 * Seed of the pseudo-random generator.
	 */
	private long seed = DEFAULT_SEED;

	/**
	 * Whether to delete existing concerts first; otherwise a non-empty database is an error.
	 */
	private boolean replace;

	public int getConcerts() {
		return this.concerts;
	}

	public void setConcerts(int concerts) {
		this.concerts = concerts;
	}

	public long getSeed() {
		return this.seed;
	}

	public void setSeed(long seed) {
		this.seed = seed;
	}

	public boolean isReplace() {
		return this.replace;
	}

	public void setReplace(boolean replace) {
		this.replace = replace;
	}

}
