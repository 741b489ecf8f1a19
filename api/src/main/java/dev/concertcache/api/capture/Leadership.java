package dev.concertcache.api.capture;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * This instance's hold on the capture lease: taken while nobody holds it, renewed every third of its TTL while
 * held. Only another holder ends the hold: when Redis cannot be reached (the lease's node down until its replica
 * is promoted, a partition), the holder reads on past the TTL. Stopping would stop this instance's own L1
 * evictions and every invalidation that could still land, and resume only after a backoff and a replay; a second
 * reader, if another instance takes the lease meanwhile, only repeats idempotent invalidations, and cannot move the
 * checkpoint past or behind the new holder's (compare-and-set).
 */
final class Leadership {

	private static final Log logger = LogFactory.getLog(Leadership.class);

	private final CaptureLease lease;

	private final CaptureMetrics metrics;

	/** Runs when another instance turns out to hold the lease: this one stops reading. */
	private final Runnable lost;

	private volatile boolean leader;

	private volatile long deadline;

	/** Set while the lease's TTL passed without a renewal Redis confirmed and this instance reads on. */
	private volatile @Nullable String problem;

	private @Nullable ScheduledExecutorService renewals;

	Leadership(CaptureLease lease, CaptureMetrics metrics, Runnable lost) {
		this.lease = lease;
		this.metrics = metrics;
		this.lost = lost;
	}

	/** How long a standby waits before it tries to take the lease again. */
	long standbyMillis() {
		return Math.max(1, this.lease.ttl().toMillis() / 3);
	}

	/** Starts renewing the lease whenever this instance holds it. */
	synchronized void start() {
		this.renewals = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "binlog-capture-lease");
			thread.setDaemon(true);
			return thread;
		});
		this.renewals.scheduleWithFixedDelay(this::renew, standbyMillis(), standbyMillis(), TimeUnit.MILLISECONDS);
	}

	boolean isLeader() {
		return this.leader;
	}

	/** Why the hold is in doubt, {@code null} while it is not. */
	@Nullable String problem() {
		return this.problem;
	}

	/** Takes the lease if nobody holds it; whether this instance holds it now. */
	boolean take() {
		if (!this.lease.hold()) {
			return false;
		}
		this.deadline = System.nanoTime() + this.lease.ttl().toNanos();
		this.leader = true;
		this.metrics.leader(true);
		logger.info("Capture: this instance holds the lease and reads the binary log");
		return true;
	}

	private void renew() {
		if (!this.leader) {
			return;
		}
		try {
			if (this.lease.hold()) {
				this.deadline = System.nanoTime() + this.lease.ttl().toNanos();
				if (this.problem != null) {
					this.problem = null;
					logger.info("Capture: the lease is renewed again");
				}
				return;
			}
			lose("another instance holds it");
		}
		catch (RuntimeException ex) {
			if (System.nanoTime() - this.deadline > 0 && this.problem == null) {
				this.problem = "the lease could not be renewed within its TTL (" + ex.getMessage()
						+ "); reading on until another instance holds it";
				logger.warn("Capture: " + this.problem);
			}
		}
	}

	/** Another instance holds the lease: this one stops reading. */
	void lose(String why) {
		this.problem = null;
		if (this.leader) {
			logger.warn("Capture: lost the lease (" + why + "); this instance stops reading the binary log");
			this.leader = false;
			this.metrics.leader(false);
			this.lost.run();
		}
	}

	/** Stops renewing and gives the lease up, if held, so that a standby takes over at once. */
	synchronized void stop() {
		if (this.renewals != null) {
			this.renewals.shutdownNow();
			this.renewals = null;
		}
		if (this.leader) {
			this.leader = false;
			this.metrics.leader(false);
			try {
				this.lease.release();
			}
			catch (RuntimeException ex) {
				logger.debug("Could not release the capture lease; it expires by itself", ex);
			}
		}
	}

}
