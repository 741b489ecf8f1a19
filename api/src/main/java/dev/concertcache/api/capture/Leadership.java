package dev.concertcache.api.capture;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * This instance's hold on the Redis lease that makes one instance the fleet's reader of the binary log: taken while
 * nobody holds it, renewed every third of its TTL while held. Where reading starts is not the lease's: it is the
 * change feed's checkpoint (ADR 0039), moved by compare-and-set, so that a reader that lost the lease (paused,
 * partitioned) cannot move it back or past what the new holder did. Only another holder ends the hold: when Redis
 * cannot be reached (the lease's node down until its replica is promoted, a partition), the holder reads on past the
 * TTL, and its next renewal takes the lapsed lease back if nobody took it meanwhile, without a replay. Stopping would
 * stop this instance's own L1 evictions and every invalidation that could still land, and resume only after a
 * backoff and a replay; a second reader, if another instance takes the lease meanwhile, only repeats idempotent
 * invalidations.
 */
final class Leadership {

	private static final Log logger = LogFactory.getLog(Leadership.class);

	private static final RedisScript<Long> HOLD = RedisScript.of("""
			local holder = redis.call('get', KEYS[1])
			if holder == ARGV[1] then
				return redis.call('pexpire', KEYS[1], ARGV[2])
			end
			if not holder then
				redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
				return 1
			end
			return 0""", Long.class);

	private static final RedisScript<Long> RELEASE = RedisScript.of("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
				return redis.call('del', KEYS[1])
			end
			return 0""", Long.class);

	private final StringRedisTemplate redis;

	private final String leaderKey;

	private final Duration ttl;

	private final String token = UUID.randomUUID().toString();

	private final CaptureMetrics metrics;

	/** Runs when another instance turns out to hold the lease: this one stops reading. */
	private final Runnable lost;

	private volatile boolean leader;

	private volatile long deadline;

	/** Set while the lease's TTL passed without a renewal Redis confirmed and this instance reads on. */
	private volatile @Nullable String problem;

	private @Nullable ScheduledExecutorService renewals;

	Leadership(StringRedisTemplate redis, String keyPrefix, Duration ttl, CaptureMetrics metrics, Runnable lost) {
		this.redis = redis;
		this.leaderKey = "{" + keyPrefix + ":capture}:leader";
		this.ttl = ttl;
		this.metrics = metrics;
		this.lost = lost;
	}

	/** How long a standby waits before it tries to take the lease again. */
	long standbyMillis() {
		return Math.max(1, this.ttl.toMillis() / 3);
	}

	/** Starts renewing the lease whenever this instance holds it. */
	synchronized void start() {
		this.renewals = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("binlog-capture-lease"));
		this.renewals.scheduleWithFixedDelay(this::renew, standbyMillis(), standbyMillis(), TimeUnit.MILLISECONDS);
	}

	boolean isLeader() {
		return this.leader;
	}

	/** Why the hold is in doubt, {@code null} while it is not. */
	@Nullable String problem() {
		return this.problem;
	}

	/** Takes the lease if nobody holds it; whether this instance holds it now. Redis errors propagate. */
	boolean take() {
		if (!hold()) {
			return false;
		}
		this.deadline = System.nanoTime() + this.ttl.toNanos();
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
			if (hold()) {
				this.deadline = System.nanoTime() + this.ttl.toNanos();
				if (this.problem != null) {
					this.problem = null;
					logger.info("Capture: the lease is renewed again");
				}
				return;
			}
			// Another instance holds the lease: this one stops reading.
			this.problem = null;
			if (this.leader) {
				logger.warn("Capture: lost the lease (another instance holds it); this instance stops reading the "
						+ "binary log");
				this.leader = false;
				this.metrics.leader(false);
				this.lost.run();
			}
		}
		catch (RuntimeException ex) {
			if (System.nanoTime() - this.deadline > 0 && this.problem == null) {
				this.problem = "the lease could not be renewed within its TTL (" + ex.getMessage()
						+ "); reading on until another instance holds it";
				logger.warn("Capture: " + this.problem);
			}
		}
	}

	/** Extends the lease if this instance holds it, or takes it if nobody does; false if another instance does. */
	private boolean hold() {
		Long held = this.redis.execute(HOLD, List.of(this.leaderKey), this.token, String.valueOf(this.ttl.toMillis()));
		return held != null && held == 1;
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
				this.redis.execute(RELEASE, List.of(this.leaderKey), this.token);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not release the capture lease; it expires by itself", ex);
			}
		}
	}

}
