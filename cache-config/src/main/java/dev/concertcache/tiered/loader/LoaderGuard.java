package dev.concertcache.tiered.loader;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.circuitbreaker.IllegalStateTransitionException;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.loader.LoadRejectedException.Reason;

/**
 * Every loader call of one cache goes through here (ADR 0030): first the circuit breaker, which rejects at once
 * while the loader is known to be unavailable, then the bulkhead, which bounds the calls in progress so that a
 * slow or dead loader holds at most {@code max-concurrent-calls} request threads. Hits never get here.
 * <p>
 * Before either, while the database was last found out of reach ({@link LoaderReachability}, shared by the caches
 * of one manager), one load at a time tries it and the others are rejected at once: a database that refuses
 * connections makes each load wait for the pool's connection timeout, and without this every bulkhead slot, and the
 * request threads behind them, would wait it out until the breaker has counted enough failures to open.
 */
public final class LoaderGuard {

	/**
	 * Retry-After hint for a load turned away by a full bulkhead, or while another load tries a loader that could not
	 * be reached: the loads in progress end within their own timeouts.
	 */
	private static final Duration RETRY_AFTER_LOADS_IN_PROGRESS = Duration.ofSeconds(1);

	private final Bulkhead bulkhead;

	private final @Nullable CircuitBreaker breaker;

	private final Duration openWait;

	private final LoaderReachability reachability;

	/**
	 * @param reachability whether the database can be reached, shared with the manager's other caches
	 * @param bulkhead the bulkhead's settings
	 * @param breaker the circuit breaker's settings, {@code null} for none
	 */
	public LoaderGuard(LoaderReachability reachability, BulkheadRegistry bulkheads, CircuitBreakerRegistry breakers,
			String name, BulkheadConfig bulkhead, @Nullable CircuitBreakerConfig breaker) {
		this.reachability = reachability;
		this.bulkhead = bulkheads.bulkhead(name, bulkhead);
		this.openWait = (breaker != null) ? Duration.ofMillis(breaker.getWaitIntervalFunctionInOpenState().apply(1))
				: Duration.ZERO;
		this.breaker = (breaker != null) ? breakers.circuitBreaker(name, CircuitBreakerConfig.from(breaker)
			// A full bulkhead says nothing about the loader; any other failure (a bug, a missing row mapped to an
			// exception) is the loader answering, so it counts as a success.
			.ignoreExceptions(BulkheadFullException.class)
			.recordException(LoaderFailures::isUnavailable)
			// An open breaker rejects thousands of loads a second, each for the same reason: no stack to fill in.
			.writableStackTraceEnabled(false)
			.build()) : null;
		if (this.breaker != null) {
			reachability.whenReachableAgain(this::tryAgainIfOpen);
		}
	}

	/**
	 * Another cache's load has reached the database again: this breaker, if it opened while the database was out of
	 * reach, lets its trial load through now instead of turning every load away for the rest of its wait, during
	 * which reads the gate refused have nothing to be served with.
	 */
	private void tryAgainIfOpen() {
		CircuitBreaker breaker = this.breaker;
		if (breaker != null && breaker.getState() == CircuitBreaker.State.OPEN) {
			try {
				breaker.transitionToHalfOpenState();
			}
			catch (IllegalStateTransitionException ex) {
				// It left OPEN meanwhile: its own wait ended or a trial closed it.
			}
		}
	}

	/**
	 * Calls {@code loader} if the breaker and the bulkhead let it, and, while the database was last found out of
	 * reach, no other load is trying it.
	 * @throws LoadRejectedException if one of them does not; while the database was last found out of reach, caused
	 * by that failure, so that {@link LoaderFailures#isUnreachable} says so of the rejection too: the
	 * breaker opened for it, the bulkhead's slots are held by loads waiting for connections the database does not
	 * take, or another load is trying it. A breaker opened by timeouts rejects as a database that answers.
	 */
	public <T> T call(Supplier<T> loader) {
		RuntimeException unreachable = this.reachability.lastUnreachable();
		if (unreachable != null && !this.reachability.startTrial()) {
			throw new LoadRejectedException(Reason.UNREACHABLE, RETRY_AFTER_LOADS_IN_PROGRESS, unreachable);
		}
		Supplier<T> guarded = Bulkhead.decorateSupplier(this.bulkhead, () -> observed(loader));
		if (this.breaker != null) {
			guarded = CircuitBreaker.decorateSupplier(this.breaker, guarded);
		}
		try {
			return guarded.get();
		}
		catch (CallNotPermittedException ex) {
			throw new LoadRejectedException(Reason.CIRCUIT_OPEN, this.openWait, causedBy(ex));
		}
		catch (BulkheadFullException ex) {
			throw new LoadRejectedException(Reason.BULKHEAD_FULL, RETRY_AFTER_LOADS_IN_PROGRESS, causedBy(ex));
		}
		finally {
			if (unreachable != null) {
				this.reachability.endTrial();
			}
		}
	}

	/**
	 * The failure that last found the database out of reach, if no load has succeeded since, else {@code rejection}.
	 */
	private Throwable causedBy(RuntimeException rejection) {
		return Objects.requireNonNullElse(this.reachability.lastUnreachable(), rejection);
	}

	/** The failure that last found the database out of reach, or {@code null} if a load has succeeded since. */
	public @Nullable RuntimeException lastUnreachable() {
		return this.reachability.lastUnreachable();
	}

	/** Calls {@code loader}, remembering whether it failed for want of a reachable loader. */
	private <T> T observed(Supplier<T> loader) {
		try {
			T result = loader.get();
			this.reachability.loadEnded(null);
			return result;
		}
		catch (RuntimeException ex) {
			this.reachability.loadEnded(ex);
			throw ex;
		}
		catch (Error ex) {
			this.reachability.loadEnded(null);
			throw ex;
		}
	}

	/** How long the breaker stays open: how often a reader tries a loader that could not be reached again. */
	public Duration openWait() {
		return this.openWait;
	}

	/** The breaker, or {@code null} if it is disabled. */
	public @Nullable CircuitBreaker breaker() {
		return this.breaker;
	}

}
