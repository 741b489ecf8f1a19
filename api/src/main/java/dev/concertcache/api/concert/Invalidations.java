package dev.concertcache.api.concert;

import dev.concertcache.tiered.InvalidationFailedException;

/**
 * Runs every invalidation of a change even after one failed, and reports the first failure at the end: the first
 * of which not every instance was told, if any (ADR 0037).
 */
public final class Invalidations {

	private InvalidationFailedException failure;

	/** Runs {@code invalidation}, remembering its failure if it is the first. */
	public void run(Runnable invalidation) {
		try {
			invalidation.run();
		}
		catch (InvalidationFailedException ex) {
			if (this.failure == null || (this.failure.isEveryInstanceTold() && !ex.isEveryInstanceTold())) {
				this.failure = ex;
			}
		}
	}

	/**
	 * @throws InvalidationFailedException the first failure of which not every instance was told, else the first
	 * failure, if one failed
	 */
	public void rethrowFirstFailure() {
		if (this.failure != null) {
			throw this.failure;
		}
	}

}
