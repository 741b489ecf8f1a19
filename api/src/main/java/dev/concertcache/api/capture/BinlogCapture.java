package dev.concertcache.api.capture;

import java.io.IOException;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.event.DeleteRowsEventData;
import com.github.shyiko.mysql.binlog.event.Event;
import com.github.shyiko.mysql.binlog.event.EventHeaderV4;
import com.github.shyiko.mysql.binlog.event.QueryEventData;
import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.UpdateRowsEventData;
import com.github.shyiko.mysql.binlog.event.WriteRowsEventData;
import com.github.shyiko.mysql.binlog.network.ServerException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.dao.DataAccessException;

import dev.concertcache.api.capture.CapturedTables.Kind;
import dev.concertcache.api.capture.CapturedTables.Table;
import dev.concertcache.api.concert.ConcertCaches;
import dev.concertcache.api.schedule.ScheduleCaches;
import dev.concertcache.tiered.InvalidationFailedException;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * Reads the binary log and turns every committed change of the concert and schedule tables into the
 * invalidations a write through this service makes (ADR 0033). One instance of the fleet reads, the holder of a
 * Redis lease; the others stand by. After each committed transaction's invalidations went through, its position
 * is stored in Redis; every (re)connection starts from the stored position (confirming, from the checkpoint beside
 * the invalidation stream, ADR 0037), so a dropped connection, a Redis outage, a failover or a handover to another
 * instance replays rather than skips (at least once). A position that is missing or gone from the server costs
 * one flush of every tier.
 */
class BinlogCapture implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(BinlogCapture.class);

	/** MySQL/MariaDB ER_MASTER_FATAL_ERROR_READING_BINLOG: the requested position is not on the server. */
	private static final int POSITION_GONE = 1236;

	/** Server positions kept while the reader is behind them; past it, the oldest are dropped. */
	private static final int MAX_PROBES = 64;

	private final CaptureProperties properties;

	private final BinlogServer server;

	private final CaptureLease lease;

	private final CapturedTables tables;

	private final ConcertCaches concertCaches;

	private final ScheduleCaches scheduleCaches;

	/** Where the reader's confirmations go (ADR 0037); {@code null} for none. */
	private final @Nullable TieredCacheManager cacheManager;

	private final CaptureMetrics metrics;

	private final Clock clock;

	private final Duration stalenessBound;

	private volatile long serverId;

	private volatile boolean running;

	private volatile State state = State.STARTING;

	private volatile String lastProblem;

	private volatile BinlogPosition lastPosition;

	private volatile boolean leader;

	private volatile long leaseDeadline;

	/** Whether the lease's TTL passed without a renewal Redis confirmed, while this instance reads on. */
	private volatile boolean leaseUnconfirmed;

	private volatile BinaryLogClient client;

	private CountDownLatch stopped = new CountDownLatch(1);

	private Thread reader;

	private ScheduledExecutorService renewals;

	/**
	 * Lands committed transactions off the binlog connection's thread: at once after each commit, and again every
	 * retry interval while Redis refuses some.
	 */
	private ScheduledExecutorService landings;

	/** The listener of the connection being read, whose commits the landing thread lands. */
	private volatile Transactions landing;

	/** Whether a landing is queued on the landing thread that has not started yet. */
	private final AtomicBoolean landingScheduled = new AtomicBoolean();

	/** Reads the server's position and confirms what has landed, every progress interval (ADR 0037). */
	private ScheduledExecutorService confirmations;

	private BinlogServer.PositionProbe positionProbe;

	/** Server positions read, oldest first, that the reader had not landed yet; on the confirmations thread only. */
	private final Deque<Probe> probes = new ArrayDeque<>();

	/** Runs before each landing of invalidations; tests park the landing thread there. */
	private volatile Runnable beforeLanding = () -> {
	};

	BinlogCapture(CaptureProperties properties, BinlogServer server, CaptureLease lease, CapturedTables tables,
			ConcertCaches concertCaches, ScheduleCaches scheduleCaches, @Nullable TieredCacheManager cacheManager,
			CaptureMetrics metrics, Clock clock, long serverId, Duration stalenessBound) {
		this.properties = properties;
		this.server = server;
		this.lease = lease;
		this.tables = tables;
		this.concertCaches = concertCaches;
		this.scheduleCaches = scheduleCaches;
		this.cacheManager = cacheManager;
		this.metrics = metrics;
		this.clock = clock;
		this.serverId = serverId;
		this.stalenessBound = stalenessBound;
	}

	/** Checks the server (before readiness), then reads or stands by in the background. */
	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		List<String> problems = startupProblems();
		if (!problems.isEmpty()) {
			String message = "Change data capture cannot read the binary log of " + this.server.address() + ": "
					+ String.join("; ", problems);
			if (this.properties.getMode() == CaptureProperties.Mode.REQUIRED) {
				throw new IllegalStateException(message + " (or set concert-cache.capture.mode=optional to start "
						+ "without it)");
			}
			logger.warn(message + ". Starting without it (concert-cache.capture.mode=optional): changes made by "
					+ "other applications show only when cached entries expire, up to " + this.stalenessBound);
			this.lastProblem = String.join("; ", problems);
			this.state = State.DISABLED;
			this.running = true;
			return;
		}
		this.running = true;
		this.stopped = new CountDownLatch(1);
		this.reader = new Thread(this::run, "binlog-capture");
		this.reader.setDaemon(true);
		this.reader.start();
		this.renewals = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "binlog-capture-lease");
			thread.setDaemon(true);
			return thread;
		});
		long interval = Math.max(1, this.lease.ttl().toMillis() / 3);
		this.renewals.scheduleWithFixedDelay(this::renewLease, interval, interval, TimeUnit.MILLISECONDS);
		this.landings = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "binlog-capture-land");
			thread.setDaemon(true);
			return thread;
		});
		long retry = this.properties.getRetryInterval().toMillis();
		this.landings.scheduleWithFixedDelay(this::landCurrent, retry, retry, TimeUnit.MILLISECONDS);
		// A thread of its own: a slow database must not hold back the lease's renewals or the landings.
		if (this.cacheManager == null) {
			return;
		}
		this.positionProbe = this.server.positionProbe();
		this.confirmations = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "binlog-capture-confirm");
			thread.setDaemon(true);
			return thread;
		});
		long confirm = this.properties.getProgress().getInterval().toMillis();
		this.confirmations.scheduleWithFixedDelay(this::confirmProgress, 0, confirm, TimeUnit.MILLISECONDS);
	}

	/**
	 * While this instance reads: reads the server's position, then tells every instance how long ago the newest
	 * position it read was read, of those the landings have reached (ADR 0037). Every transaction committed before
	 * that was within the position, so its invalidations have landed. The position is read before it is compared,
	 * so that an idle server's is confirmed at once.
	 */
	private void confirmProgress() {
		try {
			Transactions current = this.landing;
			if (current == null || !this.running || !this.leader) {
				this.probes.clear();
				return;
			}
			BinlogPosition landed = current.landed;
			long readAt = System.nanoTime();
			try {
				this.probes.addLast(new Probe(readAt, this.positionProbe.read(landed)));
			}
			catch (SQLException ex) {
				logger.debug("Capture: cannot read the server's position", ex);
			}
			while (this.probes.size() > MAX_PROBES) {
				this.probes.pollFirst();
			}
			landed = current.landed;
			Probe newest = null;
			while (!this.probes.isEmpty() && landed.includes(this.probes.peekFirst().position())) {
				newest = this.probes.pollFirst();
			}
			if (newest != null) {
				current.confirm(Duration.ofNanos(System.nanoTime() - newest.readAt()));
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Capture: confirming progress failed", ex);
		}
	}

	/**
	 * Lands the current connection's commits on the landing thread, at once: one landing takes every commit merged
	 * since the last, so the binlog thread never waits for Redis and a burst of commits costs a few landings, not
	 * one Redis round trip each (ADR 0033 revision 6).
	 */
	private void landSoon() {
		ScheduledExecutorService lander = this.landings;
		if (lander != null && this.landingScheduled.compareAndSet(false, true)) {
			try {
				lander.execute(() -> {
					this.landingScheduled.set(false);
					landCurrent();
				});
			}
			catch (java.util.concurrent.RejectedExecutionException ex) {
				// Stopping: the next reader replays from the stored position.
				this.landingScheduled.set(false);
			}
		}
	}

	private void landCurrent() {
		Transactions current = this.landing;
		if (current != null && this.running && this.leader) {
			try {
				current.land();
			}
			catch (RuntimeException ex) {
				logger.debug("Capture: retrying refused invalidations failed", ex);
			}
		}
	}

	/** Stops reading and gives the lease up, so that a standby takes over at once. */
	@Override
	public synchronized void stop() {
		if (!this.running) {
			return;
		}
		this.running = false;
		this.stopped.countDown();
		if (this.renewals != null) {
			this.renewals.shutdownNow();
		}
		if (this.landings != null) {
			this.landings.shutdownNow();
		}
		if (this.confirmations != null) {
			this.confirmations.shutdownNow();
			this.positionProbe.close();
		}
		disconnect();
		if (this.reader != null) {
			try {
				this.reader.join(this.properties.getConnectTimeout().toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
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

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/** After the cache manager, before the web server: it stops before the caches it invalidates. */
	@Override
	public int getPhase() {
		return Integer.MAX_VALUE - 2048;
	}

	State state() {
		return this.state;
	}

	String lastProblem() {
		return this.lastProblem;
	}

	BinlogPosition lastPosition() {
		return this.lastPosition;
	}

	Duration stalenessBound() {
		return this.stalenessBound;
	}

	/** Parks each landing of invalidations before it starts; for tests of a reader that falls behind. */
	void beforeLanding(Runnable hook) {
		this.beforeLanding = hook;
	}

	/** The reader's connection to the server, for tests that break it. */
	long connectionId() {
		BinaryLogClient current = this.client;
		return (current != null) ? current.getConnectionId() : -1;
	}

	private List<String> startupProblems() {
		List<String> problems = this.server.problems();
		if (!problems.isEmpty()) {
			return problems;
		}
		try {
			tryReplicationConnection();
			return List.of();
		}
		catch (ServerException ex) {
			return List.of("the replication connection was refused (" + ex.getMessage() + "): run "
					+ this.server.replicationGrant());
		}
		catch (Exception ex) {
			return List.of("the replication connection failed: " + ex);
		}
	}

	/** Opens a replication connection at the current position and waits for its first event. */
	private void tryReplicationConnection() throws Exception {
		BinaryLogClient probe = newClient(this.server.currentPosition());
		// An id of its own: the server drops an older connection that shares the reader's id.
		probe.setServerId(CaptureConfiguration.randomServerId());
		CompletableFuture<Exception> outcome = new CompletableFuture<>();
		probe.registerEventListener((event) -> outcome.complete(null));
		probe.registerLifecycleListener(new BinaryLogClient.AbstractLifecycleListener() {
			@Override
			public void onCommunicationFailure(BinaryLogClient client, Exception ex) {
				outcome.complete(ex);
			}
		});
		Thread thread = new Thread(() -> {
			try {
				probe.connect();
			}
			catch (Exception ex) {
				outcome.complete(ex);
			}
			outcome.complete(new IOException("the server closed the replication connection"));
		}, "binlog-capture-check");
		thread.setDaemon(true);
		thread.start();
		try {
			Exception failure = outcome.get(this.properties.getConnectTimeout().toMillis(), TimeUnit.MILLISECONDS);
			if (failure != null) {
				throw failure;
			}
		}
		catch (TimeoutException ex) {
			throw new IOException("no binlog event within " + this.properties.getConnectTimeout());
		}
		finally {
			probe.disconnect();
		}
	}

	private void run() {
		Duration backoff = this.properties.getReconnect().getInitialBackoff();
		while (this.running) {
			Duration wait;
			try {
				if (!this.leader && !takeLease()) {
					this.state = State.STANDBY;
					wait = Duration.ofMillis(Math.max(1, this.lease.ttl().toMillis() / 3));
				}
				else if (stream()) {
					backoff = this.properties.getReconnect().getInitialBackoff();
					wait = Duration.ZERO;
				}
				else {
					wait = backoff;
					backoff = min(backoff.multipliedBy(2), this.properties.getReconnect().getMaxBackoff());
				}
			}
			catch (RuntimeException | Error ex) {
				fail("capture failed: " + ex, ex);
				wait = backoff;
				backoff = min(backoff.multipliedBy(2), this.properties.getReconnect().getMaxBackoff());
			}
			try {
				if (!wait.isZero() && this.stopped.await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
					return;
				}
			}
			catch (InterruptedException ex) {
				return;
			}
		}
	}

	private boolean takeLease() {
		if (!this.lease.hold()) {
			return false;
		}
		this.leaseDeadline = System.nanoTime() + this.lease.ttl().toNanos();
		this.leader = true;
		this.metrics.leader(true);
		logger.info("Capture: this instance now reads the binary log of " + this.server.address());
		return true;
	}

	/**
	 * Keeps the lease while reading. Only another instance holding it ends the reading: when Redis cannot be
	 * reached (the lease's node down until its replica is promoted, a partition), the reader reads on, past the
	 * lease's TTL. Stopping would stop this instance's own L1 evictions and every invalidation that could still
	 * land, and resume only after a backoff and a replay (SQL lag near 1 s measured in a failover); a second
	 * reader, if another instance takes the lease meanwhile, only repeats idempotent invalidations, and the
	 * position is stored by the holder alone.
	 */
	private void renewLease() {
		if (!this.leader) {
			return;
		}
		try {
			if (this.lease.hold()) {
				this.leaseDeadline = System.nanoTime() + this.lease.ttl().toNanos();
				if (this.leaseUnconfirmed) {
					this.leaseUnconfirmed = false;
					this.lastProblem = null;
					logger.info("Capture: the lease is renewed again");
				}
				return;
			}
			loseLease("another instance holds it");
		}
		catch (RuntimeException ex) {
			if (System.nanoTime() - this.leaseDeadline > 0 && !this.leaseUnconfirmed) {
				this.leaseUnconfirmed = true;
				this.lastProblem = "the lease could not be renewed within its TTL (" + ex.getMessage()
						+ "); reading on until another instance holds it";
				logger.warn("Capture: " + this.lastProblem);
			}
		}
	}

	private void loseLease(String why) {
		if (this.leaseUnconfirmed) {
			this.leaseUnconfirmed = false;
			this.lastProblem = null;
		}
		if (this.leader) {
			logger.warn("Capture: lost the lease (" + why + "); this instance stops reading the binary log");
			this.leader = false;
			this.metrics.leader(false);
			disconnect();
		}
	}

	/**
	 * Streams from the stored position until the connection ends. True if the next attempt may start at once
	 * (a lost position was recovered), false if it should back off.
	 */
	private boolean stream() {
		// Confirming (ADR 0037): from the checkpoint on the invalidation stream's node, which a failover of that node
		// may have moved back to before announcements it lost; they are made again.
		String checkpoint = (this.cacheManager != null) ? this.cacheManager.changeFeedCheckpoint() : null;
		BinlogPosition position = (this.cacheManager != null) ? BinlogPosition.parse(checkpoint)
				: this.lease.position();
		if (position == null || !position.server().equals(this.server.address())) {
			String stored = (this.cacheManager != null) ? "checkpoint" : "position";
			recover((position == null) ? "no-position" : "other-server",
					(position == null) ? "no " + stored + " is stored"
							: "the stored " + stored + " is of " + position.server(),
					checkpoint);
			return true;
		}
		BinaryLogClient client = newClient(position);
		Transactions listener = new Transactions(client, position, checkpoint);
		client.registerEventListener(listener);
		client.registerLifecycleListener(listener);
		this.client = client;
		if (!this.running || !this.leader) {
			return false;
		}
		this.landing = listener;
		try {
			client.connect();
		}
		catch (IOException ex) {
			listener.failure = (listener.failure != null) ? listener.failure : ex;
		}
		finally {
			// What did not land is replayed from the stored position, by this instance or the next leader.
			this.landing = null;
			this.client = null;
		}
		if (!this.running || !this.leader) {
			return false;
		}
		Exception failure = listener.failure;
		if (failure instanceof CheckpointMoved moved) {
			this.metrics.replay();
			fail(moved.getMessage(), null);
			return true;
		}
		if (failure instanceof ServerException server && server.getErrorCode() == POSITION_GONE) {
			if (server.getMessage() != null && server.getMessage().contains("same server")) {
				this.serverId = CaptureConfiguration.randomServerId();
				fail("another replica uses server id " + client.getServerId() + "; retrying with a new one", null);
				return false;
			}
			recover("position-gone", "the server no longer has position " + position + " (" + server.getMessage()
					+ ")", checkpoint);
			return true;
		}
		this.metrics.reconnect();
		fail("the binlog stream from " + this.server.address() + " ended: "
				+ ((failure != null) ? failure.toString() : "disconnected") + "; resuming from the stored position",
				null);
		return false;
	}

	/**
	 * No usable stored position: take the server's position now, flush every tier (covering whatever changed
	 * before it), and store it, as the checkpoint too if confirming ({@code checkpoint}: the one read). A failure
	 * leaves the stored position as it was, so the next attempt repeats this.
	 */
	private void recover(String reason, String why, @Nullable String checkpoint) {
		BinlogPosition current;
		try {
			current = this.server.currentPosition();
		}
		catch (java.sql.SQLException ex) {
			throw new IllegalStateException("cannot read the server's binlog position: " + ex.getMessage(), ex);
		}
		logger.warn("Capture: " + why + "; flushing every cache tier once and starting at the server's current "
				+ "position " + current + " (reason=" + reason + ")");
		this.concertCaches.invalidateAll();
		if (this.cacheManager != null && !this.cacheManager.changeFeedLanded(checkpoint, current.format())) {
			// Another reader moved it meanwhile: read it again.
			return;
		}
		if (this.lease.savePosition(current)) {
			this.lastPosition = current;
			this.metrics.positionLost(reason);
		}
		else {
			loseLease("another instance holds it");
		}
	}

	private BinaryLogClient newClient(BinlogPosition position) {
		BinaryLogClient client = new BinaryLogClient(this.server.host(), this.server.port(), this.server.username(),
				this.server.password());
		client.setServerId(this.serverId);
		// Our own loop reconnects, always from the stored position, never from the client's in-memory one.
		client.setKeepAlive(false);
		client.setConnectTimeout(this.properties.getConnectTimeout().toMillis());
		// The server sends a heartbeat when idle, so that a silently dead connection is noticed.
		client.setHeartbeatInterval(this.properties.getConnectTimeout().toMillis() / 2);
		position.applyTo(client);
		return client;
	}

	private void disconnect() {
		BinaryLogClient current = this.client;
		if (current != null) {
			try {
				current.disconnect();
			}
			catch (IOException ex) {
				logger.debug("Closing the binlog connection failed", ex);
			}
		}
	}

	private void fail(String problem, Throwable ex) {
		this.lastProblem = problem;
		this.state = State.RETRYING;
		if (this.running) {
			logger.warn("Capture: " + problem, ex);
		}
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	/** The invalidation stream's node holds a checkpoint other than the one the reader last read or moved. */
	private static final class CheckpointMoved extends IllegalStateException {

		CheckpointMoved(@Nullable String expected) {
			super("the invalidation stream's node no longer holds checkpoint " + expected + " (a failover lost the "
					+ "reader's last writes, or another reader moved it); reading again from the one it holds");
		}

	}

	/** A server position and when it was read ({@link System#nanoTime()}). */
	private record Probe(long readAt, BinlogPosition position) {
	}

	/** Where the capture is. */
	enum State {

		/** Checking the server, not yet reading. */
		STARTING,

		/** Holding the lease and reading the binary log. */
		STREAMING,

		/** Another instance holds the lease and reads. */
		STANDBY,

		/** Not reading because of a failure; retrying from the stored position. */
		RETRYING,

		/** Not reading at all: the start-up check failed in optional mode. */
		DISABLED

	}

	/**
	 * One connection's listener: collects the row changes of a transaction and, at its commit, invalidates and
	 * stores the position. It never throws (the client would log, swallow and move on): a failure closes the
	 * connection and the loop resumes from the stored position.
	 */
	private final class Transactions extends BinaryLogClient.AbstractLifecycleListener
			implements BinaryLogClient.EventListener {

		private final BinaryLogClient client;

		private TransactionChanges changes = new TransactionChanges();

		/**
		 * The changes of committed transactions whose invalidations Redis has not all taken yet, merged: while one
		 * waits, later ones are read and tried too, so that their tombstones land wherever Redis takes them (an
		 * announcement refused with the stream's node down must not hold back the tombstones readers go by).
		 */
		private TransactionChanges unlanded = new TransactionChanges();

		/** When the oldest unlanded transaction committed (binlog header, ms); for the lag meter. */
		private long oldestUnlanded;

		/** The binlog offset after the newest unlanded transaction; for the lag meter. */
		private long unlandedNextPosition;

		/** The position after the last committed transaction, to store once everything before it has landed. */
		private BinlogPosition toStore;

		/** The position after the last committed transaction read, stored or not. */
		private BinlogPosition received;

		/**
		 * The position up to which every committed transaction's invalidations have landed (stored in Redis or not):
		 * what confirmations go by (ADR 0037).
		 */
		private volatile BinlogPosition landed;

		private long toStoreOffset;

		/**
		 * The checkpoint on the invalidation stream's node this reader started from or last moved (ADR 0037): while
		 * the node holds it, it holds every announcement this reader made before it. Guarded by
		 * {@link #checkpointLock}, so that a confirmation never goes by one a landing is moving.
		 */
		private @Nullable String checkpoint;

		private final Object checkpointLock = new Object();

		private volatile Exception failure;

		Transactions(BinaryLogClient client, BinlogPosition start, @Nullable String checkpoint) {
			this.client = client;
			this.received = start;
			this.landed = start;
			this.checkpoint = checkpoint;
		}

		/**
		 * Moves the checkpoint to {@code through}, whose invalidations have landed, when confirming; whether it is
		 * there. If the stream's node holds another one, its node lost this reader's last writes (a failover) or
		 * another reader moved it: this connection ends, and the next reads from the node's checkpoint.
		 */
		private boolean checkpointed(BinlogPosition through) {
			TieredCacheManager feed = BinlogCapture.this.cacheManager;
			if (feed == null) {
				return true;
			}
			synchronized (this.checkpointLock) {
				String next = through.format();
				if (this.failure != null || next.equals(this.checkpoint)) {
					return this.failure == null;
				}
				try {
					if (!feed.changeFeedLanded(this.checkpoint, next)) {
						stop(new CheckpointMoved(this.checkpoint));
						return false;
					}
				}
				catch (RuntimeException ex) {
					BinlogCapture.this.metrics.retry();
					logger.debug("Capture: Redis did not take the checkpoint; trying again", ex);
					return false;
				}
				this.checkpoint = next;
				return true;
			}
		}

		/** Confirms every change committed more than {@code lag} ago, if the stream's node holds the checkpoint. */
		void confirm(Duration lag) {
			synchronized (this.checkpointLock) {
				if (this.failure == null && !BinlogCapture.this.cacheManager.changeFeedCaughtUp(lag, this.checkpoint)) {
					stop(new CheckpointMoved(this.checkpoint));
				}
			}
		}

		@Override
		public void onConnect(BinaryLogClient client) {
			if (!BinlogCapture.this.running || !BinlogCapture.this.leader) {
				// stop() or a lost lease came between the loop's check and connect(), which disconnect() misses.
				stop(new IllegalStateException("stopped while connecting"));
				return;
			}
			BinlogCapture.this.state = State.STREAMING;
			BinlogCapture.this.lastProblem = null;
		}

		@Override
		public void onCommunicationFailure(BinaryLogClient client, Exception ex) {
			if (this.failure == null) {
				this.failure = ex;
			}
		}

		@Override
		public void onEventDeserializationFailure(BinaryLogClient client, Exception ex) {
			stop(ex);
		}

		@Override
		public void onEvent(Event event) {
			if (this.failure != null) {
				return;
			}
			try {
				handle(event);
			}
			catch (Exception ex) {
				stop(ex);
			}
		}

		private void handle(Event event) throws Exception {
			EventHeaderV4 header = event.getHeader();
			switch (header.getEventType()) {
				case TABLE_MAP -> BinlogCapture.this.tables.onTableMap(event.getData());
				case WRITE_ROWS, EXT_WRITE_ROWS -> {
					WriteRowsEventData data = event.getData();
					rows(data.getTableId(), "insert", data.getRows().size(), (table) -> data.getRows()
						.forEach((row) -> add(table, table.key(row, data.getIncludedColumns()))));
				}
				case UPDATE_ROWS, EXT_UPDATE_ROWS -> {
					UpdateRowsEventData data = event.getData();
					rows(data.getTableId(), "update", data.getRows().size(), (table) -> data.getRows().forEach((row) -> {
						add(table, table.key(row.getKey(), data.getIncludedColumnsBeforeUpdate()));
						add(table, table.key(row.getValue(), data.getIncludedColumns()));
					}));
				}
				case DELETE_ROWS, EXT_DELETE_ROWS -> {
					DeleteRowsEventData data = event.getData();
					rows(data.getTableId(), "delete", data.getRows().size(), (table) -> data.getRows()
						.forEach((row) -> add(table, table.key(row, data.getIncludedColumns()))));
				}
				case XID -> commit(header);
				case QUERY -> query(event.getData(), header);
				default -> {
				}
			}
		}

		private void query(QueryEventData data, EventHeaderV4 header) {
			String sql = data.getSql().strip();
			if (sql.equalsIgnoreCase("BEGIN")) {
				return;
			}
			if (!sql.equalsIgnoreCase("COMMIT") && !sql.equalsIgnoreCase("ROLLBACK")
					&& BinlogCapture.this.tables.namedIn(sql)) {
				// DDL or TRUNCATE of a captured table: logged as a statement, without rows.
				this.changes.everything();
			}
			commit(header);
		}

		/**
		 * The keys of one row event's rows, if its table is captured. Rows of every other table of the database (the
		 * ticketing application's orders, say) are skipped. A captured row this reader cannot map makes every entry
		 * stale instead of ending the stream, which would stop at the same event after every reconnect.
		 */
		private void rows(long tableId, String type, int count, Consumer<Table> keys) {
			Table table = BinlogCapture.this.tables.table(tableId);
			if (table.kind() == Kind.IGNORED) {
				return;
			}
			try {
				keys.accept(table);
			}
			catch (RuntimeException ex) {
				logger.warn("Capture: could not read the key of a row of " + table.name() + "; invalidating every "
						+ "cache for its transaction", ex);
				this.changes.everything();
			}
			BinlogCapture.this.metrics.rows(table.name(), type, count);
		}

		private void add(Table table, Long key) {
			if (table.kind() == Kind.CONCERT) {
				this.changes.concert(key);
			}
			else if (table.kind() == Kind.SCHEDULE) {
				this.changes.schedule(key);
			}
		}

		private void commit(EventHeaderV4 header) {
			TransactionChanges committed = this.changes;
			this.changes = new TransactionChanges();
			String gtid = this.client.getGtidSet();
			BinlogPosition position = (gtid != null) ? BinlogPosition.gtid(BinlogCapture.this.server.address(), gtid)
					: BinlogPosition.file(BinlogCapture.this.server.address(), this.client.getBinlogFilename(),
							header.getNextPosition());
			synchronized (this) {
				if (!committed.isEmpty()) {
					if (this.unlanded.isEmpty()) {
						this.oldestUnlanded = header.getTimestamp();
					}
					this.unlanded.merge(committed, BinlogCapture.this.properties.getMaxKeysPerTransaction());
					this.unlandedNextPosition = header.getNextPosition();
				}
				this.toStore = position;
				this.toStoreOffset = header.getNextPosition();
				this.received = position;
			}
			landSoon();
		}

		/**
		 * Tries every unlanded invalidation once (they are idempotent: a retry after a partial failure sends some
		 * again), then stores the position once nothing before it is left; runs on the landing thread only. What
		 * Redis refuses is tried again after the next commit or every retry interval, on the same binlog
		 * connection: a killed Redis
		 * connection costs one interval, where ending the stream cost a reconnect and a replay (up to 0.9 s
		 * measured). If another instance took the lease meanwhile, it replays from the stored position.
		 */
		void land() {
			if (!BinlogCapture.this.running) {
				// Stopped: the next reader replays from the stored position; this one must not store one.
				return;
			}
			// Taken at once, so that the binlog thread merges the next commits meanwhile instead of waiting for Redis.
			TransactionChanges batch;
			long oldest;
			long nextPosition;
			BinlogPosition store;
			long storeOffset;
			BinlogPosition through;
			synchronized (this) {
				through = this.received;
				batch = this.unlanded;
				this.unlanded = new TransactionChanges();
				oldest = this.oldestUnlanded;
				nextPosition = this.unlandedNextPosition;
				store = this.toStore;
				storeOffset = this.toStoreOffset;
			}
			if (!batch.isEmpty()) {
				BinlogCapture.this.beforeLanding.run();
				try {
					batch.invalidate(BinlogCapture.this.concertCaches, BinlogCapture.this.scheduleCaches,
							BinlogCapture.this.properties.getMaxKeysPerTransaction());
				}
				catch (RuntimeException ex) {
					// Redis refused some (InvalidationFailedException, DataAccessException): nothing is dropped.
					synchronized (this) {
						batch.merge(this.unlanded, BinlogCapture.this.properties.getMaxKeysPerTransaction());
						this.unlanded = batch;
						this.oldestUnlanded = oldest;
					}
					if (ex instanceof InvalidationFailedException failed && failed.isEveryInstanceTold()
							&& checkpointed(through)) {
						// Every instance reads the refused keys from the database until they land (a cluster node
						// down until its replica is promoted): confirmations go on, the retries land them.
						this.landed = through;
					}
					BinlogCapture.this.metrics.retry();
					logger.debug("Capture: Redis did not take every invalidation; trying again", ex);
					return;
				}
				BinlogCapture.this.metrics.committed(oldest, BinlogCapture.this.clock.millis(), nextPosition);
			}
			if (!checkpointed(through)) {
				return;
			}
			this.landed = through;
			if (store == null) {
				return;
			}
			boolean saved;
			try {
				// Everything up to it has landed: the batch held every change committed before it.
				saved = BinlogCapture.this.lease.savePosition(store);
			}
			catch (DataAccessException ex) {
				BinlogCapture.this.metrics.retry();
				logger.debug("Capture: Redis did not take the position; trying again", ex);
				return;
			}
			if (!saved) {
				loseLease("another instance holds it");
				stop(new IllegalStateException("the lease was lost"));
				return;
			}
			BinlogCapture.this.lastPosition = store;
			BinlogCapture.this.metrics.position(storeOffset);
			synchronized (this) {
				if (this.toStore == store) {
					this.toStore = null;
				}
			}
		}

		private void stop(Exception ex) {
			this.failure = ex;
			try {
				this.client.disconnect();
			}
			catch (IOException closeFailed) {
				logger.debug("Closing the binlog connection failed", closeFailed);
			}
		}

	}

}
