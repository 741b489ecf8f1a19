package dev.concertcache.api.concert;

import dev.concertcache.tiered.InvalidationFailedException;

/**
 * Runs every invalidation of a change even after one failed, and reports the first failure at the end.
 */
public final class Invalidations {

	private InvalidationFailedException failure;

	/** Runs {@code invalidation}, remembering its failure if it is the first. */
	public void run(Runnable invalidation) {
		try {
			invalidation.run();
		}
		catch (InvalidationFailedException ex) {
			if (this.failure == null) {
				this.failure = ex;
			}
		}
	}

	/**
	 * @throws InvalidationFailedException the first failure, if one failed
	 */
	public void rethrowFirstFailure() {
		if (this.failure != null) {
			throw this.failure;
		}
	}

}
