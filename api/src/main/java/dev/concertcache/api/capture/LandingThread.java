package dev.concertcache.api.capture;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The thread that runs the current lander off the binlog thread: at once after each commit, and every retry
 * interval for the retries that fall due. One landing takes every commit since the last, so the binlog thread
 * never waits for Redis and a burst of commits costs a few landings, not one Redis round trip each.
 */
final class LandingThread {

	/** The name of the thread every landing runs on, and of the threads that send its invalidations. */
	static final String NAME = "binlog-capture-land";

	/** How many invalidations of one landing are sent at once; the landing thread sends any beyond. */
	private static final int SENDERS = 4;

	private static final Log logger = LogFactory.getLog(LandingThread.class);

	private final Supplier<@Nullable Lander> current;

	private final ScheduledExecutorService executor;

	/** Whether a landing is queued that has not started yet. */
	private final AtomicBoolean queued = new AtomicBoolean();

	/** Starts landing for whichever lander {@code current} returns, every {@code interval} and on request. */
	LandingThread(Supplier<@Nullable Lander> current, Duration interval) {
		this.current = current;
		this.executor = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named(NAME));
		long millis = Math.max(1, interval.toMillis());
		this.executor.scheduleWithFixedDelay(this::land, millis, millis, TimeUnit.MILLISECONDS);
	}

	/** Threads for one landing's invalidations, started when it has several to send and ended after 30 s idle. */
	static Executor senders() {
		return new ThreadPoolExecutor(0, SENDERS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
				DaemonThreads.named(NAME), new ThreadPoolExecutor.CallerRunsPolicy());
	}

	/** Lands at once, unless a landing is queued already (it takes this commit too). */
	void landSoon() {
		if (this.queued.compareAndSet(false, true)) {
			try {
				this.executor.execute(() -> {
					this.queued.set(false);
					land();
				});
			}
			catch (RejectedExecutionException ex) {
				// Stopping: the next reader replays from the checkpoint.
				this.queued.set(false);
			}
		}
	}

	private void land() {
		Lander lander = this.current.get();
		if (lander != null) {
			try {
				lander.land();
			}
			catch (RuntimeException ex) {
				logger.debug("Capture: landing failed", ex);
			}
		}
	}

	void stop() {
		this.executor.shutdownNow();
	}

}
