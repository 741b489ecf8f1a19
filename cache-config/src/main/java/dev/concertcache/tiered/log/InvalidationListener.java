package dev.concertcache.tiered.log;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

import dev.concertcache.tiered.gate.FreshnessGate;
import dev.concertcache.tiered.gate.InvalidationWatermark;
import dev.concertcache.tiered.gate.ServerConfirmation;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;

/**
 * Reads the invalidation stream on a dedicated connection (a blocking {@code XREAD} after the last message read),
 * hands each message to the manager and moves the gate's watermarks (ADR 0039, "The listener's position"). Any
 * failure of the loop, errors included, is logged and retried, so the thread never dies silently.
 */
public final class InvalidationListener implements Runnable {

	private static final Log logger = LogFactory.getLog(InvalidationListener.class);

	private static final Duration MAX_BACKOFF = Duration.ofSeconds(1);

	/** Between failed reads: 50 ms, doubling up to a second, for as long as it takes. */
	private static final ExponentialBackOff BACKOFF = new ExponentialBackOff(50, 2);

	static {
		BACKOFF.setMaxInterval(MAX_BACKOFF.toMillis());
	}

	private static final int BATCH = 1000;

	private final AbstractRedisClient client;

	private final String stream;

	private final Duration blockTimeout;

	private final StreamConnection connection;

	private final Consumer<Map<String, String>> messages;

	private final Consumer<String> flush;

	private final TieredCacheMetrics metrics;

	private final FreshnessGate gate;

	/**
	 * When the last read that did not come back full was sent (watermark clock): every message of a later read was
	 * appended after then. {@link InvalidationWatermark#NEVER} before the first, and while the stream is read again
	 * from its start, whose messages are not new.
	 */
	private long previousRead = InvalidationWatermark.NEVER;

	/** Told of other connections' disconnects, then the {@code run_id} check; {@code null} on a cluster. */
	private final @Nullable ServerConfirmation server;

	private final AtomicBoolean suspect = new AtomicBoolean();

	private final RedisConnectionStateListener disconnects = new RedisConnectionStateListener() {

		@Override
		public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
			if (connection instanceof StatefulRedisSentinelConnection<?, ?>) {
				return; // a Sentinel's connection (asked for the primary, then closed) carries no data
			}
			if (InvalidationListener.this.connection.mayCarryTheStream(connection)) {
				InvalidationListener.this.gate.disconnected();
			}
			if (InvalidationListener.this.connection.is(connection)) {
				InvalidationListener.this.suspect.set(true);
				InvalidationListener.this.reading = false;
			}
			else if (InvalidationListener.this.server != null) {
				InvalidationListener.this.server.disconnected();
			}
		}

	};

	private volatile boolean running;

	/** Whether the last read of the stream came back and no disconnect was seen since. */
	private volatile boolean reading;

	private volatile Thread thread;

	/** Where in the stream this listener is, and on which server. */
	private final StreamPosition position;

	public InvalidationListener(AbstractRedisClient client, String stream, Duration blockTimeout, String clientName,
			Consumer<Map<String, String>> messages, Consumer<String> flush, Consumer<String> newServer,
			TieredCacheMetrics metrics, FreshnessGate gate, boolean confirmsServer) {
		this.client = client;
		this.stream = stream;
		this.blockTimeout = blockTimeout;
		// The blocking read must outlast its BLOCK time, whatever the shared command timeout is.
		this.connection = new StreamConnection(client, stream, blockTimeout.plusSeconds(2), clientName);
		this.messages = messages;
		this.flush = flush;
		this.metrics = metrics;
		this.gate = gate;
		this.server = confirmsServer ? gate.server() : null;
		this.position = new StreamPosition(stream, flush, newServer, gate.heard());
	}

	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		if (this.position.isStarted()) {
			// Started again: while it was stopped, another server may have taken the stream over.
			this.suspect.set(true);
		}
		this.client.addListener(this.disconnects);
		Thread thread = new Thread(this, "tiered-cache-invalidations");
		thread.setDaemon(true);
		this.thread = thread;
		thread.start();
	}

	public synchronized void stop() {
		this.running = false;
		this.client.removeListener(this.disconnects);
		this.connection.close();
		Thread thread = this.thread;
		if (thread != null) {
			thread.interrupt();
			try {
				thread.join(MAX_BACKOFF.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Has the next read check which server holds the stream first: the topology says the stream's slot has another
	 * primary now, whose own messages may have ids before the last one read (its clock behind the old one's).
	 */
	public void serverMayHaveChanged() {
		this.suspect.set(true);
	}

	public boolean isConnected() {
		Thread thread = this.thread;
		return this.reading && thread != null && thread.isAlive();
	}

	@Override
	public void run() {
		BackOffExecution backoff = null;
		while (this.running) {
			try {
				RedisClusterCommands<String, String> redis = this.connection.commands();
				long disconnects = (this.server != null) ? this.server.disconnects() : 0;
				if (!this.position.isStarted()) {
					this.position.start(redis, this.connection.runId(redis));
					if (this.suspect.getAndSet(false)) {
						// Started while Redis was unreachable: L1 was filled without hearing from anyone.
						this.flush.accept("connected after start-up");
					}
				}
				else if (this.suspect.getAndSet(false)) {
					// After a disconnect: another server is reported and resumed on; the same one is asked whether
					// messages were lost meanwhile.
					if (!this.position.onServer(redis, this.connection.runId(redis))) {
						this.position.recoverAfterDisconnect(redis);
					}
				}
				else if (this.server != null && !this.server.isConfirmed()) {
					// Another connection dropped: it may have come back on another server.
					this.position.onServer(redis, this.connection.runId(redis));
				}
				if (this.server != null) {
					this.server.confirmed(disconnects);
				}
				long gateDisconnects = this.gate.disconnects();
				long sentAt = this.gate.now();
				List<StreamMessage<String, String>> batch = redis.xread(
						XReadArgs.Builder.block(this.blockTimeout).count(BATCH),
						XReadArgs.StreamOffset.from(this.stream, this.position.lastId()));
				for (StreamMessage<String, String> message : batch) {
					this.position.read(message.getId(), message.getBody().get("seq"));
					String feedLag = message.getBody().get(InvalidationStream.FEED_LAG);
					if (feedLag != null) {
						feedCaughtUp(feedLag, message.getBody().get(InvalidationStream.FEED_POSITION));
					}
					else {
						deliver(message.getBody());
					}
				}
				if (batch.size() < BATCH) {
					// Everything published before this read was sent is in it (a full batch may have more).
					this.gate.heard().heardUntil(sentAt);
					this.previousRead = sentAt;
				}
				this.gate.readAfter(gateDisconnects);
				this.reading = true;
				backoff = null;
			}
			catch (Throwable ex) {
				if (!this.running) {
					break;
				}
				this.suspect.set(true);
				this.reading = false;
				this.metrics.error(TieredCacheMetrics.ALL_CACHES, "subscribe");
				backoff = (backoff != null) ? backoff : BACKOFF.start();
				Duration wait = Duration.ofMillis(backoff.nextBackOff());
				if (ex instanceof RuntimeException) {
					if (logger.isDebugEnabled()) {
						logger.debug("Invalidation stream read failed, retrying in " + wait, ex);
					}
				}
				else {
					logger.error("Invalidation listener failed, retrying in " + wait, ex);
				}
				if (!pause(wait)) {
					break;
				}
			}
		}
	}

	/**
	 * A change feed's confirmation, {@code lag} behind (ADR 0039): bounds the feed's watermark on this instance's
	 * own clock, from the previous read's send time, whatever the feed's clock says.
	 */
	private void feedCaughtUp(String lag, @Nullable String position) {
		if (position != null && !position.isEmpty()) {
			// Read after every invalidation before it: this instance's tiers hold nothing older.
			this.gate.feedHeard(position);
		}
		long previous = this.previousRead;
		if (previous == InvalidationWatermark.NEVER) {
			return;
		}
		try {
			this.gate.feedConfirmedUntil(previous - Long.parseLong(lag));
		}
		catch (NumberFormatException ex) {
			logger.warn("Ignoring a change feed confirmation with lag '" + lag + "'");
		}
	}

	private void deliver(Map<String, String> body) {
		try {
			this.messages.accept(body);
		}
		catch (RuntimeException ex) {
			logger.warn("Cannot apply invalidation " + body, ex);
		}
	}

	private boolean pause(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
