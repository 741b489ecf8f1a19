package dev.concertcache.api.capture;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.Ticker;
import com.github.shyiko.mysql.binlog.network.ServerException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.concertcache.api.concert.ConcertCaches;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.loader.LoaderReachability;

/**
 * Reads the binary log from the checkpoint at every (re)connection: a dropped connection, a Redis outage, a failover
 * or a handover replays rather than skips. A position missing or gone from the server costs one flush of every tier.
 */
class BinlogCapture implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(BinlogCapture.class);

	/** MySQL/MariaDB ER_MASTER_FATAL_ERROR_READING_BINLOG: the requested position is not on the server. */
	private static final int POSITION_GONE = 1236;

	private static final Status DEGRADED = new Status("DEGRADED",
			"A backend is down; the service answers what its caches hold");

	private final CaptureProperties properties;

	private final BinlogServer server;

	private final Leadership leadership;

	private final CapturedTables tables;

	private final ConcertCaches concertCaches;

	/** Where the reader's invalidations, checkpoint and confirmations go (ADR 0039). */
	private final TieredCacheManager cacheManager;

	/** Told when the reader cannot connect: the caches' loads then try the database one at a time (ADR 0030). */
	private final LoaderReachability reachability;

	private final CaptureMetrics metrics;

	private final Lander.Landing landing;

	private final Duration stalenessBound;

	private volatile long serverId;

	private volatile boolean running;

	private volatile State state = State.STARTING;

	private volatile String lastProblem;

	private volatile BinlogPosition lastPosition;

	/** The connection being read, {@code null} between connections. */
	private volatile @Nullable BinlogConnection connection;

	private CountDownLatch stopped = new CountDownLatch(1);

	private Thread readerThread;

	private volatile @Nullable LandingThread landings;

	private @Nullable Confirmer confirmer;

	/** {@code keyPrefix}: the cache's Redis key prefix, under which the lease lives. */
	BinlogCapture(CaptureProperties properties, BinlogServer server, StringRedisTemplate redis, String keyPrefix,
			CapturedTables tables, ConcertCaches concertCaches, TieredCacheManager cacheManager,
			LoaderReachability reachability, CaptureMetrics metrics, Clock clock, long serverId,
			Duration stalenessBound) {
		this.properties = properties;
		this.server = server;
		this.leadership = new Leadership(redis, keyPrefix, properties.lease().ttl(), metrics, this::disconnect);
		this.tables = tables;
		this.concertCaches = concertCaches;
		this.cacheManager = cacheManager;
		this.reachability = reachability;
		this.metrics = metrics;
		this.serverId = serverId;
		this.stalenessBound = stalenessBound;
		this.landing = new Lander.Landing(StaleCaches.of(concertCaches, properties.maxKeysPerTransaction()),
				cacheManager, metrics, clock, Ticker.systemTicker(), properties.maxKeysPerTransaction(),
				properties.retryInterval(), properties.maxRetryInterval(), LandingThread.senders());
	}

	/** Checks the server (before readiness), then reads or stands by in the background. */
	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		List<String> problems = this.server.startupProblems();
		if (!problems.isEmpty()) {
			String message = "Change data capture cannot read the binary log of " + this.server.address() + ": "
					+ String.join("; ", problems);
			if (this.properties.mode() == CaptureProperties.Mode.REQUIRED) {
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
		this.readerThread = DaemonThreads.named("binlog-capture").newThread(this::run);
		this.readerThread.start();
		this.leadership.start();
		this.landings = new LandingThread(this::currentLander, this.properties.retryInterval());
		this.confirmer = new Confirmer(this.server.positionProbe(), Ticker.systemTicker());
		this.confirmer.start(this::currentLander, this.properties.progress().interval());
	}

	/** The lander of the connection being read while this instance holds the lease, else {@code null}. */
	private @Nullable Lander currentLander() {
		BinlogConnection current = this.connection;
		return (current != null && reading()) ? current.lander() : null;
	}

	/** Stops reading and gives the lease up, so that a standby takes over at once. */
	@Override
	public synchronized void stop() {
		if (!this.running) {
			return;
		}
		this.running = false;
		this.stopped.countDown();
		if (this.landings != null) {
			this.landings.stop();
		}
		if (this.confirmer != null) {
			this.confirmer.close();
		}
		disconnect();
		if (this.readerThread != null) {
			try {
				this.readerThread.join(this.properties.connectTimeout().toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.leadership.stop();
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
		String lease = this.leadership.problem();
		return (lease != null) ? lease : this.lastProblem;
	}

	/** The server's id of the replication connection being read, -1 between connections. */
	long connectionId() {
		BinlogConnection current = this.connection;
		return (current != null) ? current.id() : -1;
	}

	/** Reads while this instance holds the lease, stands by while another does, and backs off after failures. */
	private void run() {
		Backoff reconnects = new Backoff(this.properties.reconnect().initialBackoff(),
				this.properties.reconnect().maxBackoff());
		while (this.running) {
			Duration wait;
			try {
				if (!this.leadership.isLeader() && !this.leadership.take()) {
					this.state = State.STANDBY;
					wait = Duration.ofMillis(this.leadership.standbyMillis());
				}
				else {
					wait = stream(reconnects) ? Duration.ZERO : reconnects.failed();
				}
			}
			catch (RuntimeException | Error ex) {
				fail("capture failed: " + ex, ex);
				wait = reconnects.failed();
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

	/**
	 * Streams from the checkpoint until the connection ends. True if the next attempt may start at once (a
	 * lost position was recovered, the checkpoint moved, the lease went to another instance), false if it should
	 * back off: from the initial wait if this connection was open, else longer than the last time.
	 */
	private boolean stream(Backoff reconnects) {
		// From the checkpoint on the invalidation stream's node (ADR 0039), which a failover of that node may have moved
		// back to before announcements it lost; they are made again.
		String checkpoint = this.cacheManager.changeFeedCheckpoint();
		BinlogPosition position = BinlogPosition.parse(checkpoint);
		if (position == null || !position.server().equals(this.server.address())) {
			recover((position == null) ? "no-position" : "other-server",
					(position == null) ? "no checkpoint is stored" : "the checkpoint is of " + position.server(),
					checkpoint);
			reconnects.reset();
			return true;
		}
		long readAs = this.serverId;
		BinlogConnection current = new BinlogConnection(this.server.client(position, readAs), this.server.address(),
				this.tables, this.metrics, this.landing, position, checkpoint, this);
		if (!this.running || !this.leadership.isLeader()) {
			return true;
		}
		this.connection = current;
		Exception failure;
		try {
			failure = current.read();
		}
		finally {
			// What did not land is replayed from the checkpoint, by this instance or the next leader.
			this.connection = null;
		}
		if (current.opened()) {
			reconnects.reset();
		}
		else if (failure != null) {
			// Found before any load: a killed database ends this stream at once, and the next connect is refused.
			this.reachability.connectionFailed(failure);
		}
		if (!this.running || !this.leadership.isLeader()) {
			return true;
		}
		if (failure instanceof Lander.CheckpointMoved moved) {
			this.metrics.replay();
			fail(moved.getMessage(), null);
			return true;
		}
		if (failure instanceof ServerException server && server.getErrorCode() == POSITION_GONE) {
			if (server.getMessage() != null && server.getMessage().contains("same server")) {
				this.serverId = CaptureConfiguration.randomServerId();
				fail("another replica uses server id " + readAs + "; retrying with a new one", null);
				return false;
			}
			recover("position-gone", "the server no longer has position " + position + " (" + server.getMessage()
					+ ")", checkpoint);
			reconnects.reset();
			return true;
		}
		this.metrics.reconnect();
		fail("the binlog stream from " + this.server.address() + " ended: "
				+ ((failure != null) ? failure.toString() : "disconnected") + "; resuming from the checkpoint",
				null);
		return false;
	}

	/**
	 * No usable checkpoint ({@code checkpoint}: the one read): take the server's position now, flush every tier
	 * (covering whatever changed before it), and move the checkpoint there. A failure leaves the checkpoint as it
	 * was, so the next attempt repeats this.
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
		if (!this.cacheManager.changeFeedLanded(checkpoint, current.format())) {
			// Another reader moved it meanwhile: read it again.
			return;
		}
		this.lastPosition = current;
		this.metrics.positionLost(reason);
	}

	private void disconnect() {
		BinlogConnection current = this.connection;
		if (current != null) {
			current.close();
		}
	}

	private void fail(String problem, Throwable ex) {
		this.lastProblem = problem;
		this.state = State.RETRYING;
		if (this.running) {
			logger.warn("Capture: " + problem, ex);
		}
	}

	/** Whether this capture runs and holds the lease. */
	boolean reading() {
		return this.running && this.leadership.isLeader();
	}

	/** A connection is open and read. */
	void streaming() {
		this.state = State.STREAMING;
		this.lastProblem = null;
	}

	/** A transaction committed: land it soon. */
	void committed() {
		LandingThread thread = this.landings;
		if (thread != null) {
			thread.landSoon();
		}
	}

	/** The checkpoint moved to {@code position}. */
	void checkpointed(BinlogPosition position) {
		this.lastPosition = position;
	}

	/**
	 * {@code capture}: UP while this instance reads the binary log or stands by while another does; DEGRADED (HTTP
	 * 200, as for the database and Redis in ADR 0032) while nobody here reads it: the instance still serves, but
	 * changes by other applications show late. Not part of readiness: every instance shares the cause.
	 */
	Health health() {
		State state = this.state;
		Health.Builder builder = switch (state) {
			case STREAMING, STANDBY -> Health.up();
			case STARTING, RETRYING, DISABLED -> Health.status(DEGRADED);
		};
		builder.withDetail("state", state.name().toLowerCase(Locale.ROOT))
			.withDetail("mode", this.properties.mode().name().toLowerCase(Locale.ROOT));
		BinlogPosition position = this.lastPosition;
		if (position != null) {
			builder.withDetail("position", position.format());
		}
		String problem = lastProblem();
		if (problem != null) {
			builder.withDetail("problem", problem);
			if (state != State.STREAMING) {
				builder.withDetail("impact", "changes by other applications show when cached entries expire, up to "
						+ this.stalenessBound);
			}
		}
		return builder.build();
	}

	/** Where the capture is. */
	enum State {

		STARTING, // checking the server, not yet reading
		STREAMING, // holding the lease and reading the binary log
		STANDBY, // another instance holds the lease and reads
		RETRYING, // not reading because of a failure; retrying from the checkpoint
		DISABLED // not reading at all: the start-up check failed in optional mode

	}

}
