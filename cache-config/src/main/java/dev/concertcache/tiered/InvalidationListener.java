package dev.concertcache.tiered;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Reads the invalidation stream on a dedicated connection (a blocking {@code XREAD} from the last id seen) and
 * hands each message to the manager (ADR 0013).
 * <p>
 * Nothing is lost while the connection is down: the next read resumes from the last id. After any disconnect
 * the listener checks whether it can still trust that: if Redis restarted ({@code run_id} changed), if the
 * stream is gone, or if entries after the last id may have been trimmed, it asks for a full L1 flush instead.
 */
final class InvalidationListener implements Runnable {

	private static final Log logger = LogFactory.getLog(InvalidationListener.class);

	static final String START = "0-0";

	private static final Duration MIN_BACKOFF = Duration.ofMillis(50);

	private static final Duration MAX_BACKOFF = Duration.ofSeconds(1);

	private static final int BATCH = 1000;

	private final RedisClient client;

	private final String stream;

	private final Duration blockTimeout;

	private final String clientName;

	private final Consumer<Map<String, String>> messages;

	private final Consumer<String> flush;

	private final TieredCacheMetrics metrics;

	private final AtomicBoolean suspect = new AtomicBoolean();

	private final RedisConnectionStateListener disconnects = new RedisConnectionStateListener() {

		@Override
		public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
			if (connection == InvalidationListener.this.connection) {
				InvalidationListener.this.suspect.set(true);
			}
		}

	};

	private volatile boolean running;

	private volatile StatefulRedisConnection<String, String> connection;

	private volatile Thread thread;

	private volatile String lastId;

	/** Entries read since the stream began (Redis 7 {@code entries-added} numbering), or -1 if unknown. */
	private long entriesRead = -1;

	private String runId;

	InvalidationListener(RedisClient client, String stream, Duration blockTimeout, String clientName,
			Consumer<Map<String, String>> messages, Consumer<String> flush, TieredCacheMetrics metrics) {
		this.client = client;
		this.stream = stream;
		this.blockTimeout = blockTimeout;
		this.clientName = clientName;
		this.messages = messages;
		this.flush = flush;
		this.metrics = metrics;
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
		StatefulRedisConnection<String, String> connection = this.connection;
		return connection != null && connection.isOpen() && this.lastId != null;
	}

	@Override
	public void run() {
		Duration backoff = MIN_BACKOFF;
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
				List<StreamMessage<String, String>> batch = redis.xread(
						XReadArgs.Builder.block(this.blockTimeout).count(BATCH),
						XReadArgs.StreamOffset.from(this.stream, this.lastId));
				for (StreamMessage<String, String> message : batch) {
					this.lastId = message.getId();
					this.entriesRead = (this.entriesRead >= 0) ? this.entriesRead + 1 : -1;
					deliver(message.getBody());
				}
				if (batch.size() == BATCH) {
					// Far behind: the entries after these may have been trimmed already.
					this.suspect.set(true);
				}
				backoff = MIN_BACKOFF;
			}
			catch (RuntimeException ex) {
				if (!this.running) {
					break;
				}
				this.suspect.set(true);
				this.metrics.error(TieredCacheMetrics.ALL_CACHES, "subscribe");
				if (logger.isDebugEnabled()) {
					logger.debug("Invalidation stream read failed, retrying in " + backoff, ex);
				}
				if (!pause(backoff)) {
					break;
				}
				backoff = (backoff.compareTo(MAX_BACKOFF) < 0) ? backoff.multipliedBy(2) : MAX_BACKOFF;
			}
		}
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

	private void recover(RedisCommands<String, String> redis) {
		String runId = runId(redis);
		if (!runId.equals(this.runId)) {
			this.runId = runId;
			this.lastId = START;
			this.entriesRead = 0;
			this.flush.accept("Redis restarted");
			return;
		}
		List<Object> info;
		try {
			info = redis.xinfoStream(this.stream);
		}
		catch (RedisCommandExecutionException noSuchStream) {
			if (!START.equals(this.lastId)) {
				this.lastId = START;
				this.entriesRead = 0;
				this.flush.accept("invalidation stream gone");
			}
			return;
		}
		if (entriesLostAfterLastId(info)) {
			this.flush.accept("invalidations trimmed before they were read");
		}
	}

	/**
	 * Whether entries after the last id read have been trimmed away. Redis does not record trimmed ids, but
	 * since 7.0 it counts the entries ever added: the ones trimmed from the head are that count minus the
	 * length, and none may be beyond what this listener has read. Without the count the answer is conservative:
	 * yes when the oldest entry left is newer than the last one read.
	 */
	private boolean entriesLostAfterLastId(List<Object> info) {
		String lastGenerated = field(info, "last-generated-id");
		if (lastGenerated == null || compareIds(lastGenerated, this.lastId) <= 0) {
			return false;
		}
		String added = field(info, "entries-added");
		String length = field(info, "length");
		if (added != null && length != null && this.entriesRead >= 0) {
			return Long.parseLong(added) - Long.parseLong(length) > this.entriesRead;
		}
		String first = firstEntryId(info);
		return first == null || compareIds(first, this.lastId) > 0;
	}

	private static String firstEntryId(List<Object> info) {
		for (int i = 0; i + 1 < info.size(); i += 2) {
			if ("first-entry".equals(String.valueOf(info.get(i)))) {
				Object entry = info.get(i + 1);
				if (entry instanceof List<?> list && !list.isEmpty() && list.get(0) != null) {
					return String.valueOf(list.get(0));
				}
				return null;
			}
		}
		return null;
	}

	private void deliver(Map<String, String> body) {
		try {
			this.messages.accept(body);
		}
		catch (RuntimeException ex) {
			logger.warn("Cannot apply invalidation " + body, ex);
		}
	}

	private void startFromTheEnd(RedisCommands<String, String> redis) {
		try {
			List<Object> info = redis.xinfoStream(this.stream);
			String id = field(info, "last-generated-id");
			String added = field(info, "entries-added");
			this.entriesRead = (added != null) ? Long.parseLong(added) : -1;
			this.lastId = (id != null) ? id : START;
		}
		catch (RedisCommandExecutionException noSuchStream) {
			this.entriesRead = 0;
			this.lastId = START;
		}
	}

	private static String runId(RedisCommands<String, String> redis) {
		for (String line : redis.info("server").split("\r?\n")) {
			if (line.startsWith("run_id:")) {
				return line.substring("run_id:".length()).trim();
			}
		}
		return "";
	}

	private static String field(List<Object> info, String name) {
		for (int i = 0; i + 1 < info.size(); i += 2) {
			if (name.equals(String.valueOf(info.get(i)))) {
				Object value = info.get(i + 1);
				return (value != null) ? String.valueOf(value) : null;
			}
		}
		return null;
	}

	static int compareIds(String left, String right) {
		long[] l = parse(left);
		long[] r = parse(right);
		int byTime = Long.compare(l[0], r[0]);
		return (byTime != 0) ? byTime : Long.compare(l[1], r[1]);
	}

	private static long[] parse(String id) {
		int dash = id.indexOf('-');
		if (dash < 0) {
			return new long[] { Long.parseLong(id), 0 };
		}
		return new long[] { Long.parseLong(id.substring(0, dash)), Long.parseLong(id.substring(dash + 1)) };
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
