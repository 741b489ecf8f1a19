package dev.concertcache.tiered;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * Reads the invalidation stream on a dedicated connection (a blocking {@code XREAD} from the last id seen) and
 * hands each message to the manager (ADR 0013).
 * <p>
 * Nothing is lost while the connection is down: the next read resumes from the last id. Every message carries the
 * number the stream's sequence counter gave it; a message whose number does not follow the last one means that
 * messages in between were trimmed, or that the stream (and its counter) started again (a Redis restart, FLUSHALL,
 * DEL), and the listener asks for a full L1 flush. After a disconnect it also flushes if Redis restarted
 * ({@code run_id} changed). Each read that comes back moves the {@link InvalidationWatermark}; any failure of
 * the loop, errors included, is logged and retried, so the thread never dies silently.
 */
final class InvalidationListener implements Runnable {

	private static final Log logger = LogFactory.getLog(InvalidationListener.class);

	static final String START = "0-0";

	private static final Duration MAX_BACKOFF = Duration.ofSeconds(1);

	/** Between failed reads: 50 ms, doubling up to a second, for as long as it takes. */
	private static final ExponentialBackOff BACKOFF = backOff(Duration.ofMillis(50), MAX_BACKOFF);

	private static final int BATCH = 1000;

	private final RedisClient client;

	private final String stream;

	private final Duration blockTimeout;

	private final String clientName;

	private final Consumer<Map<String, String>> messages;

	private final Consumer<String> flush;

	private final TieredCacheMetrics metrics;

	private final InvalidationWatermark watermark;

	private final AtomicBoolean suspect = new AtomicBoolean();

	private final RedisConnectionStateListener disconnects = new RedisConnectionStateListener() {

		@Override
		public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
			if (connection == InvalidationListener.this.connection) {
				InvalidationListener.this.suspect.set(true);
				InvalidationListener.this.reading = false;
			}
		}

	};

	private volatile boolean running;

	/** Whether the last read of the stream came back and no disconnect was seen since. */
	private volatile boolean reading;

	private volatile StatefulRedisConnection<String, String> connection;

	private volatile Thread thread;

	private volatile String lastId;

	/** The sequence number of the last message read, or -1 before the first one. */
	private long lastSequence = -1;

	private String runId;

	InvalidationListener(RedisClient client, String stream, Duration blockTimeout, String clientName,
			Consumer<Map<String, String>> messages, Consumer<String> flush, TieredCacheMetrics metrics,
			InvalidationWatermark watermark) {
		this.client = client;
		this.stream = stream;
		this.blockTimeout = blockTimeout;
		this.clientName = clientName;
		this.messages = messages;
		this.flush = flush;
		this.metrics = metrics;
		this.watermark = watermark;
	}

	synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		this.client.addListener(this.disconnects);
		Thread thread = new Thread(this, "tiered-cache-invalidations");
		thread.setDaemon(true);
		this.thread = thread;
		thread.start();
	}

	synchronized void stop() {
		this.running = false;
		this.client.removeListener(this.disconnects);
		StatefulRedisConnection<String, String> connection = this.connection;
		if (connection != null) {
			connection.closeAsync();
		}
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

	boolean isConnected() {
		Thread thread = this.thread;
		return this.reading && thread != null && thread.isAlive();
	}

	@Override
	public void run() {
		BackOffExecution backoff = null;
		while (this.running) {
			try {
				RedisCommands<String, String> redis = connection().sync();
				if (this.lastId == null) {
					this.runId = runId(redis);
					startFromTheEnd(redis);
					if (this.suspect.getAndSet(false)) {
						// Started while Redis was unreachable: L1 was filled without hearing from anyone.
						this.flush.accept("connected after start-up");
					}
				}
				else if (this.suspect.getAndSet(false)) {
					recover(redis);
				}
				long sentAt = this.watermark.now();
				List<StreamMessage<String, String>> batch = redis.xread(
						XReadArgs.Builder.block(this.blockTimeout).count(BATCH),
						XReadArgs.StreamOffset.from(this.stream, this.lastId));
				for (StreamMessage<String, String> message : batch) {
					this.lastId = message.getId();
					checkSequence(message.getBody().get("seq"));
					deliver(message.getBody());
				}
				if (batch.size() < BATCH) {
					// Everything published before this read was sent is in it (a full batch may have more).
					this.watermark.heardUntil(sentAt);
				}
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
	 * Flushes L1 if a message's number does not follow the last one: messages were trimmed before they were read,
	 * or the stream and its counter started again.
	 */
	private void checkSequence(String value) {
		long sequence;
		try {
			sequence = (value != null) ? Long.parseLong(value) : -1;
		}
		catch (NumberFormatException ex) {
			sequence = -1;
		}
		if (this.lastSequence >= 0 && sequence != this.lastSequence + 1) {
			this.flush.accept((sequence > this.lastSequence)
					? "invalidations " + (this.lastSequence + 1) + " to " + (sequence - 1) + " were lost"
					: "invalidation stream started again");
		}
		this.lastSequence = sequence;
	}

	private StatefulRedisConnection<String, String> connection() {
		StatefulRedisConnection<String, String> connection = this.connection;
		if (connection == null || !connection.isOpen()) {
			connection = this.client.connect(StringCodec.UTF8);
			// The blocking read must outlast its BLOCK time, whatever the shared command timeout is.
			connection.setTimeout(this.blockTimeout.plusSeconds(2));
			connection.sync().clientSetname(this.clientName);
			this.connection = connection;
		}
		return connection;
	}

	/**
	 * After a disconnect: a restarted Redis has lost the messages this listener had not read yet; otherwise the
	 * sequence counter tells whether messages were published since the last one read, and the stream whether the
	 * next of them is still there (trimmed, or the stream deleted, if not).
	 */
	private void recover(RedisCommands<String, String> redis) {
		String runId = runId(redis);
		if (!runId.equals(this.runId)) {
			this.runId = runId;
			this.lastId = START;
			this.lastSequence = -1;
			this.flush.accept("Redis restarted");
			return;
		}
		if (this.lastSequence < 0) {
			return;
		}
		String counter = redis.get(sequenceKey(this.stream));
		long published = (counter != null) ? Long.parseLong(counter) : 0;
		if (published == this.lastSequence) {
			return;
		}
		List<StreamMessage<String, String>> next = redis.xrange(this.stream,
				io.lettuce.core.Range.create("(" + this.lastId, "+"), io.lettuce.core.Limit.from(1));
		String sequence = next.isEmpty() ? null : next.get(0).getBody().get("seq");
		if (published < this.lastSequence || !String.valueOf(this.lastSequence + 1).equals(sequence)) {
			this.flush.accept("invalidations after " + this.lastSequence + " were lost while disconnected");
			this.lastSequence = -1;
			if (next.isEmpty()) {
				startFromTheEnd(redis);
			}
		}
	}

	/** The key of the counter that numbers the messages of {@code stream}. */
	static String sequenceKey(String stream) {
		return stream + ":seq";
	}

	private void deliver(Map<String, String> body) {
		try {
			this.messages.accept(body);
		}
		catch (RuntimeException ex) {
			logger.warn("Cannot apply invalidation " + body, ex);
		}
	}

	/**
	 * Starts after the stream's last message; the next one must follow the counter's number, read in the same
	 * transaction.
	 */
	private void startFromTheEnd(RedisCommands<String, String> redis) {
		redis.multi();
		redis.xrevrange(this.stream, io.lettuce.core.Range.create("-", "+"), io.lettuce.core.Limit.from(1));
		redis.get(sequenceKey(this.stream));
		io.lettuce.core.TransactionResult result = redis.exec();
		List<StreamMessage<String, String>> last = result.get(0);
		String counter = result.get(1);
		this.lastId = last.isEmpty() ? START : last.get(0).getId();
		this.lastSequence = (counter != null) ? Long.parseLong(counter) : 0;
	}

	private static String runId(RedisCommands<String, String> redis) {
		for (String line : redis.info("server").split("\r?\n")) {
			if (line.startsWith("run_id:")) {
				return line.substring("run_id:".length()).trim();
			}
		}
		return "";
	}

	private static ExponentialBackOff backOff(Duration initial, Duration maximum) {
		ExponentialBackOff backOff = new ExponentialBackOff(initial.toMillis(), 2);
		backOff.setMaxInterval(maximum.toMillis());
		return backOff;
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
