package dev.concertcache.api.capture;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import com.github.benmanes.caffeine.cache.Ticker;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.concertcache.api.concert.ConcertCaches.Stale;
import dev.concertcache.tiered.InvalidationFailedException;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * Lands the invalidations of one binlog connection's commits on the landing thread, sending again only what Redis
 * refused ({@link PendingInvalidations}), and moves the change feed's checkpoint (ADR 0039), where every reader
 * starts, past what landed or what every instance heard has not (each reads it from the database until it lands).
 */
final class Lander {

	private static final Log logger = LogFactory.getLog(Lander.class);

	private final Connection connection;

	private final Landing landing;

	private final PendingInvalidations pending;

	/** Committed since the last landing took them; guarded by {@code this}. */
	private TransactionChanges incoming = new TransactionChanges();

	/** When the oldest incoming transaction committed (binlog header, ms); guarded by {@code this}. */
	private long incomingOldest;

	/** The binlog offset after the newest incoming transaction; guarded by {@code this}. */
	private long incomingOffset;

	/** The position after the last committed transaction read; guarded by {@code this}. */
	private BinlogPosition received;

	/** The binlog offset of {@link #received}; guarded by {@code this}. */
	private long receivedOffset;

	/** When the oldest transaction with pending invalidations committed (ms), -1 for none; landing thread only. */
	private long pendingOldest = -1;

	private long pendingOffset;

	/** Through where every invalidation landed, as last told to the connection; landing thread only. */
	private @Nullable BinlogPosition reported;

	/** Up to here every committed transaction's invalidations have landed, or every instance heard they have not. */
	private volatile BinlogPosition landed;

	/**
	 * The checkpoint on the invalidation stream's node this reader started from or last moved (ADR 0039); guarded
	 * by {@link #checkpointLock}, so that a confirmation never goes by one a landing is moving.
	 */
	private @Nullable String checkpoint;

	private final Object checkpointLock = new Object();

	Lander(Connection connection, Landing landing, BinlogPosition start, @Nullable String checkpoint) {
		this.connection = connection;
		this.landing = landing;
		this.pending = new PendingInvalidations(landing.retryInterval(), landing.maxRetryInterval());
		this.received = start;
		this.landed = start;
		this.checkpoint = checkpoint;
	}

	/** A transaction committed at {@code position}; on the binlog thread. */
	synchronized void committed(TransactionChanges changes, BinlogPosition position, long commitMillis, long offset) {
		if (!changes.isEmpty()) {
			if (this.incoming.isEmpty()) {
				this.incomingOldest = commitMillis;
			}
			this.incoming.merge(changes, this.landing.maxKeys());
			this.incomingOffset = offset;
		}
		this.received = position;
		this.receivedOffset = offset;
	}

	BinlogPosition landed() {
		return this.landed;
	}

	/**
	 * Sends what committed since the last landing and what is due for a retry, then moves the checkpoint as far as
	 * that allows; on the landing thread only.
	 */
	void land() {
		if (this.connection.ended()) {
			return;
		}
		TransactionChanges batch;
		BinlogPosition through;
		long throughOffset;
		synchronized (this) {
			batch = this.incoming;
			this.incoming = new TransactionChanges();
			through = this.received;
			throughOffset = this.receivedOffset;
			if (!batch.isEmpty()) {
				this.pendingOldest = (this.pendingOldest < 0) ? this.incomingOldest : this.pendingOldest;
				this.pendingOffset = this.incomingOffset;
			}
		}
		Ticker ticker = this.landing.ticker();
		if (!batch.isEmpty()) {
			this.pending.add(this.landing.caches().stale(batch), ticker.read());
		}
		List<Stale> due = this.pending.due(ticker.read());
		List<@Nullable RuntimeException> failures = send(due);
		for (int i = 0; i < due.size(); i++) {
			Stale stale = due.get(i);
			RuntimeException failure = failures.get(i);
			if (failure == null) {
				this.pending.landed(stale);
				continue;
			}
			// InvalidationFailedException, DataAccessException: nothing is dropped.
			this.pending.refused(stale,
					failure instanceof InvalidationFailedException failed && failed.isEveryInstanceTold(),
					ticker.read());
			this.landing.metrics().retry();
			logger.debug("Capture: Redis did not take the invalidation of " + stale + "; trying it again", failure);
		}
		if (!this.pending.isEmpty()) {
			if (this.pending.everyInstanceTold() && checkpointed(through)) {
				// Every instance reads the refused keys from the database until they land (a cluster node down
				// until its replica is promoted): confirmations go on, the retries land them.
				this.landed = through;
			}
			return;
		}
		if (this.pendingOldest >= 0) {
			this.landing.metrics().committed(this.pendingOldest, this.landing.clock().millis(), this.pendingOffset);
			this.pendingOldest = -1;
		}
		if (!checkpointed(through)) {
			return;
		}
		this.landed = through;
		if (through != this.reported) {
			this.reported = through;
			this.connection.checkpointed(through);
			this.landing.metrics().position(throughOffset);
		}
	}

	/**
	 * Sends every invalidation of {@code due} side by side ({@link Landing#senders()}): each is a few Redis round trips,
	 * and a transaction's entries (a concert, its schedules, its list block, the list's end) would otherwise wait for
	 * one another. Returns each one's failure, {@code null} where Redis took it, in the order of {@code due}.
	 */
	private List<@Nullable RuntimeException> send(List<Stale> due) {
		if (due.size() == 1) {
			return Collections.singletonList(invalidate(due.get(0)));
		}
		List<CompletableFuture<@Nullable RuntimeException>> sent = new ArrayList<>(due.size());
		for (Stale stale : due) {
			sent.add(CompletableFuture.supplyAsync(() -> invalidate(stale), this.landing.senders()));
		}
		List<@Nullable RuntimeException> failures = new ArrayList<>(due.size());
		for (CompletableFuture<@Nullable RuntimeException> each : sent) {
			failures.add(each.join());
		}
		return failures;
	}

	private @Nullable RuntimeException invalidate(Stale stale) {
		try {
			this.landing.caches().invalidate(stale);
			return null;
		}
		catch (RuntimeException ex) {
			return ex;
		}
	}

	/**
	 * Moves the checkpoint to {@code through}, whose invalidations have landed; whether it is there. If the stream's
	 * node holds another one, its node lost this reader's last writes (a failover) or another reader moved it (this
	 * one lost the lease): the connection ends, and the next reads from the node's checkpoint.
	 */
	private boolean checkpointed(BinlogPosition through) {
		TieredCacheManager feed = this.landing.feed();
		synchronized (this.checkpointLock) {
			String next = through.format();
			if (this.connection.ended() || next.equals(this.checkpoint)) {
				return !this.connection.ended();
			}
			try {
				if (!feed.changeFeedLanded(this.checkpoint, next)) {
					this.connection.end(new CheckpointMoved(this.checkpoint));
					return false;
				}
			}
			catch (RuntimeException ex) {
				this.landing.metrics().retry();
				logger.debug("Capture: Redis did not take the checkpoint; trying again", ex);
				return false;
			}
			this.checkpoint = next;
			return true;
		}
	}

	/**
	 * Tells every instance that every change committed before {@code readAt} ({@link Ticker} time, when the
	 * server's position that {@link #landed()} covers was read) has landed, if the stream's node holds the
	 * checkpoint. The lag is measured once the checkpoint lock is held: a landing may hold it across a Redis
	 * script, and the confirmation must not claim the age it had before that wait.
	 */
	void confirm(long readAt) {
		TieredCacheManager feed = this.landing.feed();
		synchronized (this.checkpointLock) {
			if (this.connection.ended()) {
				return;
			}
			Duration lag = Duration.ofNanos(this.landing.ticker().read() - readAt);
			if (!feed.changeFeedCaughtUp(lag, this.checkpoint)) {
				this.connection.end(new CheckpointMoved(this.checkpoint));
			}
		}
	}

	/** The binlog connection a lander lands for. */
	interface Connection {

		/** Whether the connection ended or the capture stopped: the next reader replays from the checkpoint. */
		boolean ended();

		/** Ends the connection; the capture reads again from the node's checkpoint. */
		void end(Exception why);

		/** Every invalidation up to {@code position} has landed, and the checkpoint is there. */
		void checkpointed(BinlogPosition position);

	}

	/**
	 * What every lander of a capture shares.
	 * @param feed where confirmations and checkpoints go (ADR 0039)
	 * @param senders the threads that send one landing's invalidations side by side
	 */
	record Landing(StaleCaches caches, TieredCacheManager feed, CaptureMetrics metrics,
			Clock clock, Ticker ticker, int maxKeys, Duration retryInterval, Duration maxRetryInterval,
			Executor senders) {
	}

	/** The invalidation stream's node no longer holds the checkpoint the reader last read or moved. */
	static final class CheckpointMoved extends IllegalStateException {

		CheckpointMoved(@Nullable String expected) {
			super("the invalidation stream's node no longer holds checkpoint " + expected + " (a failover lost the "
					+ "reader's last writes, or another reader moved it); reading again from the one it holds");
		}

	}

}
