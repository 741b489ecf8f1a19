package dev.concertcache.tiered;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import dev.concertcache.tiered.TieredCacheProperties.CacheDefaults;
import dev.concertcache.tiered.TieredCacheProperties.CacheOverrides;

/**
 * The resolved settings of one cache: its overrides over the defaults, checked once.
 *
 * @param l1Ttl time an entry stays in the in-process tier
 * @param l2Ttl time an entry stays in Redis
 * @param absentTtl time an absent result stays cached, in both tiers
 * @param l1MaximumSize maximum number of in-process entries
 * @param jitter fraction by which each time to live is spread either way
 * @param staleIfError time an expired value may still be served, marked stale, while the loader fails (zero: off)
 */
record CacheSpec(Duration l1Ttl, Duration l2Ttl, Duration absentTtl, long l1MaximumSize, double jitter,
		Duration staleIfError) {

	static final double MAXIMUM_JITTER = 0.5;

	static CacheSpec of(CacheDefaults defaults) {
		return new CacheSpec(defaults.getL1Ttl(), defaults.getL2Ttl(), defaults.getAbsentTtl(),
				defaults.getL1MaximumSize(), defaults.getJitter(), defaults.getStaleIfError());
	}

	CacheSpec with(CacheOverrides overrides) {
		if (overrides == null) {
			return this;
		}
		return new CacheSpec((overrides.getL1Ttl() != null) ? overrides.getL1Ttl() : this.l1Ttl,
				(overrides.getL2Ttl() != null) ? overrides.getL2Ttl() : this.l2Ttl,
				(overrides.getAbsentTtl() != null) ? overrides.getAbsentTtl() : this.absentTtl,
				(overrides.getL1MaximumSize() != null) ? overrides.getL1MaximumSize() : this.l1MaximumSize,
				(overrides.getJitter() != null) ? overrides.getJitter() : this.jitter,
				(overrides.getStaleIfError() != null) ? overrides.getStaleIfError() : this.staleIfError);
	}

	/**
	 * Checks that the settings make sense together.
	 * @param where the property path the settings come from, for the message
	 * @return this spec
	 * @throws IllegalStateException naming the property and both values otherwise
	 */
	CacheSpec validate(String where) {
		requirePositive(where + ".l1-ttl", this.l1Ttl);
		requirePositive(where + ".l2-ttl", this.l2Ttl);
		requirePositive(where + ".absent-ttl", this.absentTtl);
		if (this.l1Ttl.compareTo(this.l2Ttl) >= 0) {
			throw new IllegalStateException(where + ".l1-ttl (" + this.l1Ttl + ") must be shorter than " + where
					+ ".l2-ttl (" + this.l2Ttl + "): an instance's copy must expire before the shared one");
		}
		if (this.absentTtl.compareTo(this.l2Ttl) > 0) {
			throw new IllegalStateException(where + ".absent-ttl (" + this.absentTtl + ") must not be longer than "
					+ where + ".l2-ttl (" + this.l2Ttl + ")");
		}
		if (this.l1MaximumSize < 0) {
			throw new IllegalStateException(where + ".l1-maximum-size must not be negative, was " + this.l1MaximumSize);
		}
		if (!(this.jitter >= 0 && this.jitter <= MAXIMUM_JITTER)) {
			throw new IllegalStateException(
					where + ".jitter must be between 0 and " + MAXIMUM_JITTER + ", was " + this.jitter);
		}
		if (this.staleIfError == null || this.staleIfError.isNegative()) {
			throw new IllegalStateException(
					where + ".stale-if-error must be zero (off) or positive, was " + this.staleIfError);
		}
		return this;
	}

	/** Whether expired values may be served stale while the loader fails. */
	boolean servesStale() {
		return !this.staleIfError.isZero();
	}

	/** The L1 time to live of an entry, jittered, in nanoseconds (Caffeine's unit). */
	long l1Nanos(boolean absent) {
		Duration ttl = (absent && this.absentTtl.compareTo(this.l1Ttl) < 0) ? this.absentTtl : this.l1Ttl;
		return jittered(ttl.toNanos());
	}

	/**
	 * The L2 freshness of an entry, jittered, in milliseconds. Redis keeps a value {@link #staleIfError} longer
	 * (see {@link #l2StaleMillis}).
	 */
	long l2Millis(boolean absent) {
		return Math.max(1, jittered((absent ? this.absentTtl : this.l2Ttl).toMillis()));
	}

	/** What Redis keeps an entry for beyond its freshness: the stale window for values, nothing for absent ones. */
	long l2StaleMillis(boolean absent) {
		return absent ? 0 : this.staleIfError.toMillis();
	}

	/** What L1 keeps an entry for beyond its freshness, in nanoseconds. */
	long l1StaleNanos(boolean absent) {
		return absent ? 0 : this.staleIfError.toNanos();
	}

	private long jittered(long ttl) {
		if (this.jitter == 0) {
			return ttl;
		}
		double factor = 1 + this.jitter * (2 * ThreadLocalRandom.current().nextDouble() - 1);
		return (long) (ttl * factor);
	}

	private static void requirePositive(String name, Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new IllegalStateException(name + " must be positive, was " + value);
		}
	}

}
