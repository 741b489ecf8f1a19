package dev.concertcache.tiered;

/**
 * An invalidation did not reach Redis (down, slow, or its circuit breaker open), so other instances have not
 * heard of it. Thrown only to callers that can replay it from a durable record ({@link TieredCache#invalidate}).
 *
 * @author concert-cache
 */
public class InvalidationFailedException extends RuntimeException {

	public InvalidationFailedException(String cache, Throwable cause) {
		super("Invalidation of cache '" + cache + "' did not reach Redis: " + cause.getMessage(), cause);
	}

}
