package dev.concertcache.tiered.gate;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * The newest position of the change feed (the database's binary log) that this instance has heard confirmed:
 * the feed appends it to the invalidation stream after the invalidations of every change up to it, so once the
 * listener has read it, both tiers of this instance reflect those changes (ADR 0038). Causal reads wait on it for
 * the position of a write a client made elsewhere. The position is in the feed's own notation: whoever waits says
 * what covers what.
 */
public final class ChangeFeedPosition {

	/** Guarded by {@code this}. */
	private @Nullable String heard;

	/** The feed confirmed {@code position}, read in order after every invalidation before it. */
	public synchronized void heard(String position) {
		this.heard = position;
		notifyAll();
	}

	/**
	 * Waits until a heard position satisfies {@code covers}, at most {@code timeout}.
	 * @return whether one did
	 */
	public boolean await(Predicate<String> covers, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this) {
			while (this.heard == null || !covers.test(this.heard)) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				TimeUnit.NANOSECONDS.timedWait(this, left);
			}
			return true;
		}
	}

}
