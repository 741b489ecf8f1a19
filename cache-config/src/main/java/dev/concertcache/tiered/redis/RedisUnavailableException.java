package dev.concertcache.tiered.redis;

/** Redis could not be used for this call; the read or write goes on without it. */
public final class RedisUnavailableException extends RuntimeException {

	private final boolean everyInstanceTold;

	public RedisUnavailableException(Throwable cause) {
		this(cause, false);
	}

	private RedisUnavailableException(Throwable cause, boolean everyInstanceTold) {
		super(cause.getMessage(), cause, false, false);
		this.everyInstanceTold = everyInstanceTold;
	}

	/** This failure of an eviction, and whether every instance was told on the stream that it has not landed. */
	public RedisUnavailableException told(boolean everyInstanceTold) {
		return new RedisUnavailableException(getCause(), everyInstanceTold);
	}

	public boolean everyInstanceTold() {
		return this.everyInstanceTold;
	}

}
