package dev.concertcache.tiered;

/**
 * An invalidation did not reach Redis (down, slow, or its circuit breaker open), so other instances have not
 * heard of it. Thrown only to callers that can replay it from a durable record ({@link TieredCache#invalidate}).
 *
 * @author concert-cache
 */
public class InvalidationFailedException extends RuntimeException {

	private final boolean everyInstanceTold;

	/**
	 * @param everyInstanceTold whether every instance was told on the invalidation stream that this invalidation has
	 * not landed (each then reads the key from the loader, past both tiers, until it does)
	 */
	public InvalidationFailedException(String cache, Throwable cause, boolean everyInstanceTold) {
		super("Invalidation of cache '" + cache + "' did not reach Redis: " + cause.getMessage(), cause);
		this.everyInstanceTold = everyInstanceTold;
	}

	/**
	 * Whether every instance was told that this invalidation has not landed: none serves the old value meanwhile,
	 * though Redis still holds it until a retry lands (ADR 0039, "While a primary is down", rule 2).
	 */
	public boolean isEveryInstanceTold() {
		return this.everyInstanceTold;
	}

}
