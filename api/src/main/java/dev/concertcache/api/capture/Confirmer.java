package dev.concertcache.api.capture;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import com.github.benmanes.caffeine.cache.Ticker;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Every progress interval, reads the server's position and confirms to every instance how long ago the newest one
 * the lander has reached was read (ADR 0039). The position is read before it is compared, so that an idle server's
 * is confirmed at once; on a thread of its own, so that a slow database holds back neither landings nor the lease.
 */
final class Confirmer implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(Confirmer.class);

	/** Server positions kept while the lander is behind them; past it, the oldest are dropped. */
	private static final int MAX_PROBES = 64;

	private final BinlogServer.PositionProbe positionProbe;

	private final Ticker ticker;

	/** Server positions read, oldest first, that the lander had not reached yet. */
	private final Deque<Probe> probes = new ArrayDeque<>();

	private @Nullable ScheduledExecutorService executor;

	Confirmer(BinlogServer.PositionProbe positionProbe, Ticker ticker) {
		this.positionProbe = positionProbe;
		this.ticker = ticker;
	}

	/** Confirms for whichever lander {@code current} returns, every {@code interval}, on a thread of its own. */
	synchronized void start(Supplier<@Nullable Lander> current, Duration interval) {
		this.executor = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("binlog-capture-confirm"));
		this.executor.scheduleWithFixedDelay(() -> confirm(current.get()), 0, Math.max(1, interval.toMillis()),
				TimeUnit.MILLISECONDS);
	}

	/** One round for the lander of the connection being read, {@code null} while none is. */
	void confirm(@Nullable Lander current) {
		try {
			if (current == null) {
				this.probes.clear();
				return;
			}
			long readAt = this.ticker.read();
			try {
				this.probes.addLast(new Probe(readAt, this.positionProbe.read(current.landed())));
			}
			catch (SQLException ex) {
				logger.debug("Capture: cannot read the server's position", ex);
			}
			while (this.probes.size() > MAX_PROBES) {
				this.probes.pollFirst();
			}
			BinlogPosition landed = current.landed();
			Probe newest = null;
			while (!this.probes.isEmpty() && landed.includes(this.probes.peekFirst().position())) {
				newest = this.probes.pollFirst();
			}
			if (newest != null) {
				current.confirm(newest.readAt());
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Capture: confirming progress failed", ex);
		}
	}

	@Override
	public synchronized void close() {
		if (this.executor != null) {
			this.executor.shutdownNow();
		}
		this.positionProbe.close();
	}

	/** A server position and when it was read ({@link Ticker} time). */
	private record Probe(long readAt, BinlogPosition position) {
	}

}
