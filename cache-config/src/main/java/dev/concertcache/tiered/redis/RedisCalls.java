package dev.concertcache.tiered.redis;

import java.util.function.Supplier;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.lettuce.core.RedisCommandExecutionException;

import dev.concertcache.tiered.metrics.TieredCacheMetrics;

/**
 * How a Redis call of the cache fails: through the circuit breaker for reads and stores, past it for invalidations;
 * either way a failure is counted and thrown as {@link RedisUnavailableException}, and a MOVED answer tells the
 * cluster's topology watcher (ADR 0014, ADR 0039).
 */
public final class RedisCalls {

	private final CircuitBreaker breaker;

	private final TieredCacheMetrics metrics;

	/** Told of a command Redis Cluster redirected with MOVED: the client does not follow it (ADR 0039, "Client"). */
	private final Runnable moved;

	public RedisCalls(CircuitBreaker breaker, TieredCacheMetrics metrics, Runnable moved) {
		this.breaker = breaker;
		this.metrics = metrics;
		this.moved = moved;
	}

	/** The same breaker, errors counted in {@code metrics}. */
	public RedisCalls countingIn(TieredCacheMetrics metrics) {
		return new RedisCalls(this.breaker, metrics, this.moved);
	}

	public <T> T withBreaker(String cache, String operation, Supplier<T> command) {
		try {
			return this.breaker.executeSupplier(command);
		}
		catch (CallNotPermittedException ex) {
			throw new RedisUnavailableException(ex);
		}
		catch (RuntimeException ex) {
			throw failed(cache, operation, ex);
		}
	}

	/**
	 * An invalidation goes past the breaker: the breaker sheds reads from a slow Redis, but an eviction that Redis
	 * can still take must land now, not wait in this process' memory while others serve the old value.
	 * Only a Redis that does not answer (the command timeout) makes it fail.
	 */
	public <T> T pastTheBreaker(String cache, String operation, Supplier<T> command) {
		try {
			return command.get();
		}
		catch (RuntimeException ex) {
			throw failed(cache, operation, ex);
		}
	}

	private RedisUnavailableException failed(String cache, String operation, RuntimeException ex) {
		this.metrics.error(cache, operation);
		if (isMoved(ex)) {
			this.moved.run();
		}
		return new RedisUnavailableException(ex);
	}

	/** Whether Redis Cluster answered MOVED: another node serves the slot than the client's topology says. */
	private static boolean isMoved(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisCommandExecutionException && cause.getMessage() != null
					&& cause.getMessage().startsWith("MOVED ")) {
				return true;
			}
		}
		return false;
	}

}
