package dev.concertcache.api.concert;

import dev.concertcache.tiered.InvalidationFailedException;

/**
 * The failures of a change's invalidations: each one runs even after another failed, and the first failure is
 * reported at the end, preferring the first of which not every instance was told (ADR 0039, "The reader's checkpoint").
 */
final class InvalidationFailures {

	private InvalidationFailedException failure;

	/** Runs {@code invalidation}, remembering its failure if it is the first. */
	void run(Runnable invalidation) {
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
	void rethrowFirstFailure() {
		if (this.failure != null) {
			throw this.failure;
		}
	}

}
