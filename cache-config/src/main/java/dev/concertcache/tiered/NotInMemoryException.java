package dev.concertcache.tiered;

/**
 * Thrown by a read inside {@link TieredCacheManager#inMemoryOnly()} that this instance's memory cannot answer: it
 * would have waited for Redis, the loader or another reader's load. Nothing was waited for or changed; the caller
 * reads again on a thread that may wait. One instance, without a stack trace: it is control flow, not a failure.
 */
public final class NotInMemoryException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/** The one instance. */
	public static final NotInMemoryException INSTANCE = new NotInMemoryException();

	private NotInMemoryException() {
		super("Not in this instance's memory", null, false, false);
	}

}
