package dev.concertcache.tiered;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.jspecify.annotations.Nullable;

/**
 * The immutable settings of one cache, changed with withers (as Spring Data Redis'
 * {@code RedisCacheConfiguration}): {@code TieredCacheConfiguration.defaultConfig().withL1Ttl(...)}.
 *
 * @param l1Ttl time an entry stays in the in-process tier
 * @param l2Ttl time an entry stays in Redis
 * @param absentTtl time an absent result stays cached, in both tiers
 * @param l1MaximumSize maximum number of in-process entries
 * @param jitter fraction by which each time to live is spread either way
 * @param l1RefreshAhead fraction of an L1 entry's time to live, at its end, in which a hit refreshes it in the
 * background while still answering from it (zero: off)
 * @param staleIfError time an expired value may still be served, marked stale, while the loader fails (zero: off)
 * @param loaderBulkhead the bulkhead of this cache's loader calls (ADR 0030)
 * @param loaderCircuitBreaker the circuit breaker of this cache's loader calls, {@code null} for none; which
 * failures count stays the cache's decision ({@link dev.concertcache.tiered.loader.LoaderFailures})
 * @author concert-cache
 */
public record TieredCacheConfiguration(Duration l1Ttl, Duration l2Ttl, Duration absentTtl, long l1MaximumSize,
		double jitter, double l1RefreshAhead, Duration staleIfError, BulkheadConfig loaderBulkhead,
		@Nullable CircuitBreakerConfig loaderCircuitBreaker) {

	/** Default L2 (Redis) time to live. */
	public static final Duration DEFAULT_L2_TTL = Duration.ofMinutes(10);

	/**
	 * Default refresh-ahead: a hit in the last fifth of an L1 entry's time to live refreshes it in the background, so
	 * that a key read at least that often never makes a reader wait for Redis.
	 */
	public static final double DEFAULT_L1_REFRESH_AHEAD = 0.2;

	/** Default stale-if-error window (RFC 5861). */
	public static final Duration DEFAULT_STALE_IF_ERROR = Duration.ofMinutes(5);

	/** Default loader bulkhead: 16 loads in progress per cache and instance, 50 ms wait for a slot. */
	public static final BulkheadConfig DEFAULT_LOADER_BULKHEAD = BulkheadConfig.custom()
		.maxConcurrentCalls(16)
		.maxWaitDuration(Duration.ofMillis(50))
		.build();

	/**
	 * Default loader breaker: opens when half of the last 20 loads (10 at least) failed as unavailable, stays open
	 * 1 s, then lets one trial load through, which closes it if it succeeds: a loader that could not be reached is
	 * tried one load at a time anyway ({@code LoaderGuard}), and with more trials the loads between the first
	 * success and the last were turned away from a database that was back.
	 */
	public static final CircuitBreakerConfig DEFAULT_LOADER_CIRCUIT_BREAKER = CircuitBreakerConfig.custom()
		.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
		.slidingWindowSize(20)
		.minimumNumberOfCalls(10)
		.failureRateThreshold(50)
		.waitDurationInOpenState(Duration.ofSeconds(1))
		.permittedNumberOfCallsInHalfOpenState(1)
		.automaticTransitionFromOpenToHalfOpenEnabled(true)
		.build();

	static final double MAXIMUM_JITTER = 0.5;

	/** Past half of the time to live, a refresh would mostly replace values that were just read. */
	static final double MAXIMUM_L1_REFRESH_AHEAD = 0.5;

	private static final TieredCacheConfiguration DEFAULT = new TieredCacheConfiguration(Duration.ofSeconds(30),
			DEFAULT_L2_TTL, Duration.ofSeconds(5), 10_000, 0.1, DEFAULT_L1_REFRESH_AHEAD, DEFAULT_STALE_IF_ERROR,
			DEFAULT_LOADER_BULKHEAD, DEFAULT_LOADER_CIRCUIT_BREAKER);

	/** The defaults, the start of every configuration. */
	public static TieredCacheConfiguration defaultConfig() {
		return DEFAULT;
	}

	public TieredCacheConfiguration withL1Ttl(Duration l1Ttl) {
		return new TieredCacheConfiguration(l1Ttl, this.l2Ttl, this.absentTtl, this.l1MaximumSize, this.jitter,
				this.l1RefreshAhead, this.staleIfError, this.loaderBulkhead, this.loaderCircuitBreaker);
	}

	public TieredCacheConfiguration withL2Ttl(Duration l2Ttl) {
		return new TieredCacheConfiguration(this.l1Ttl, l2Ttl, this.absentTtl, this.l1MaximumSize, this.jitter,
				this.l1RefreshAhead, this.staleIfError, this.loaderBulkhead, this.loaderCircuitBreaker);
	}

	public TieredCacheConfiguration withAbsentTtl(Duration absentTtl) {
		return new TieredCacheConfiguration(this.l1Ttl, this.l2Ttl, absentTtl, this.l1MaximumSize, this.jitter,
				this.l1RefreshAhead, this.staleIfError, this.loaderBulkhead, this.loaderCircuitBreaker);
	}

	public TieredCacheConfiguration withL1MaximumSize(long l1MaximumSize) {
		return new TieredCacheConfiguration(this.l1Ttl, this.l2Ttl, this.absentTtl, l1MaximumSize, this.jitter,
				this.l1RefreshAhead, this.staleIfError, this.loaderBulkhead, this.loaderCircuitBreaker);
	}

	public TieredCacheConfiguration withJitter(double jitter) {
		return new TieredCacheConfiguration(this.l1Ttl, this.l2Ttl, this.absentTtl, this.l1MaximumSize, jitter,
				this.l1RefreshAhead, this.staleIfError, this.loaderBulkhead, this.loaderCircuitBreaker);
	}

	public TieredCacheConfiguration withL1RefreshAhead(double l1RefreshAhead) {
		return new TieredCacheConfiguration(this.l1Ttl, this.l2Ttl, this.absentTtl, this.l1MaximumSize, this.jitter,
				l1RefreshAhead, this.staleIfError, this.loaderBulkhead, this.loaderCircuitBreaker);
	}

	public TieredCacheConfiguration withStaleIfError(Duration staleIfError) {
		return new TieredCacheConfiguration(this.l1Ttl, this.l2Ttl, this.absentTtl, this.l1MaximumSize, this.jitter,
				this.l1RefreshAhead, staleIfError, this.loaderBulkhead, this.loaderCircuitBreaker);
	}

	public TieredCacheConfiguration withLoaderBulkhead(BulkheadConfig loaderBulkhead) {
		return new TieredCacheConfiguration(this.l1Ttl, this.l2Ttl, this.absentTtl, this.l1MaximumSize, this.jitter,
				this.l1RefreshAhead, this.staleIfError, loaderBulkhead, this.loaderCircuitBreaker);
	}

	/** With this loader breaker, or none for {@code null} (every miss then waits for the loader's own timeouts). */
	public TieredCacheConfiguration withLoaderCircuitBreaker(@Nullable CircuitBreakerConfig loaderCircuitBreaker) {
		return new TieredCacheConfiguration(this.l1Ttl, this.l2Ttl, this.absentTtl, this.l1MaximumSize, this.jitter,
				this.l1RefreshAhead, this.staleIfError, this.loaderBulkhead, loaderCircuitBreaker);
	}

	/**
	 * Checks that the settings make sense together.
	 * @param where the property path the settings come from, for the message
	 * @return this configuration
	 * @throws IllegalStateException naming the property and both values otherwise
	 */
	public TieredCacheConfiguration validate(String where) {
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
		if (!(this.l1RefreshAhead >= 0 && this.l1RefreshAhead <= MAXIMUM_L1_REFRESH_AHEAD)) {
			throw new IllegalStateException(where + ".l1-refresh-ahead must be between 0 and "
					+ MAXIMUM_L1_REFRESH_AHEAD + ", was " + this.l1RefreshAhead);
		}
		if (this.staleIfError == null || this.staleIfError.isNegative()) {
			throw new IllegalStateException(
					where + ".stale-if-error must be zero (off) or positive, was " + this.staleIfError);
		}
		return this;
	}

	/** Whether expired values may be served stale while the loader fails. */
	public boolean servesStale() {
		return !this.staleIfError.isZero();
	}

	/** The L1 time to live of an entry, jittered, in nanoseconds (Caffeine's unit). */
	public long l1Nanos(boolean absent) {
		Duration ttl = (absent && this.absentTtl.compareTo(this.l1Ttl) < 0) ? this.absentTtl : this.l1Ttl;
		return jittered(ttl.toNanos());
	}

	/** How long before {@code l1Nanos} ends a hit refreshes the entry in the background, in nanoseconds. */
	public long l1RefreshAheadNanos(long l1Nanos) {
		return (long) (l1Nanos * this.l1RefreshAhead);
	}

	/**
	 * The L2 freshness of an entry, jittered, in milliseconds. Redis keeps a value {@link #staleIfError} longer
	 * (see {@link #l2StaleMillis}).
	 */
	public long l2Millis(boolean absent) {
		return Math.max(1, jittered((absent ? this.absentTtl : this.l2Ttl).toMillis()));
	}

	/** What Redis keeps an entry for beyond its freshness: the stale window for values, nothing for absent ones. */
	public long l2StaleMillis(boolean absent) {
		return absent ? 0 : this.staleIfError.toMillis();
	}

	/**
	 * What L1 keeps a value for beyond its freshness, in nanoseconds: the stale window, or where the cache serves
	 * nothing stale one more L1 time to live, so that a refresh that finds the same bytes in Redis keeps the
	 * instance ({@link dev.concertcache.tiered.format.StoredDigest}). Absent results: nothing.
	 */
	public long l1StaleNanos(boolean absent) {
		return absent ? 0 : (servesStale() ? this.staleIfError : this.l1Ttl).toNanos();
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
