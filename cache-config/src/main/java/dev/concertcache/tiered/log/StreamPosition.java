package dev.concertcache.tiered.log;

import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.gate.InvalidationWatermark;

/**
 * Where the invalidation listener is in the stream: the server that holds it ({@code run_id}), the id of the last
 * message read and its number (ADR 0039, "The listener's position"). When invalidations were lost, L1 is flushed and
 * reading starts again from the stream's end.
 */
public final class StreamPosition {

	/**
	 * The last message and the counter, read together: the next message must follow the counter's number. A script
	 * rather than MULTI: Lettuce's cluster connection has no transactions, and both keys share one slot.
	 */
	private static final String LAST_MESSAGE_AND_COUNTER = """
			local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
			local id = '0-0'
			if last[1] then id = last[1][1] end
			return {id, redis.call('GET', KEYS[2]) or '0'}
			""";

	private final String stream;

	private final Consumer<String> flush;

	/** Told the {@code run_id} of another server behind the connection. */
	private final Consumer<String> newServer;

	private final InvalidationWatermark watermark;

	private volatile @Nullable String lastId;

	/** The sequence number of the last message read, or -1 before the first one. */
	private long lastSequence = -1;

	private String runId = "";

	public StreamPosition(String stream, Consumer<String> flush, Consumer<String> newServer, InvalidationWatermark watermark) {
		this.stream = stream;
		this.flush = flush;
		this.newServer = newServer;
		this.watermark = watermark;
	}

	public boolean isStarted() {
		return this.lastId != null;
	}

	/** Starts after the stream's last message on the server with {@code runId}. */
	public void start(RedisClusterCommands<String, String> redis, String runId) {
		this.runId = runId;
		startFromTheEnd(redis);
	}

	public String lastId() {
		return Objects.requireNonNull(this.lastId, "Not started");
	}

	/** A message was read: its id and number become the position. */
	public void read(String id, @Nullable String sequence) {
		this.lastId = id;
		checkSequence(sequence);
	}

	/**
	 * Whether {@code runId} is another server than the one the position is on: if so it is reported and reading
	 * resumes on it.
	 */
	public boolean onServer(RedisClusterCommands<String, String> redis, String runId) {
		if (runId.equals(this.runId)) {
			return false;
		}
		this.runId = runId;
		this.newServer.accept(runId);
		resumeOnAnotherServer(redis);
		return true;
	}

	/**
	 * Flushes L1 if a message's number does not follow the last one: messages were trimmed before they were read,
	 * or the stream and its counter started again.
	 */
	private void checkSequence(@Nullable String value) {
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

	/** After a disconnect from the same server: flushes L1 if messages published meanwhile are gone. */
	public void recoverAfterDisconnect(RedisClusterCommands<String, String> redis) {
		if (this.lastSequence < 0) {
			return;
		}
		String counter = redis.get(InvalidationStream.sequenceKey(this.stream));
		long published = (counter != null) ? Long.parseLong(counter) : 0;
		if (published == this.lastSequence) {
			return;
		}
		List<StreamMessage<String, String>> next = redis.xrange(this.stream,
				Range.create("(" + this.lastId, "+"), Limit.from(1));
		String sequence = next.isEmpty() ? null : next.get(0).getBody().get("seq");
		if (published < this.lastSequence || !String.valueOf(this.lastSequence + 1).equals(sequence)) {
			this.flush.accept("invalidations after " + this.lastSequence + " were lost while disconnected");
			this.lastSequence = -1;
			if (next.isEmpty()) {
				startFromTheEnd(redis);
			}
		}
	}

	/**
	 * On another server, reading goes on only if it holds the last message read under its number; one that lacks it
	 * may give its own messages earlier ids and the same numbers, so L1 is flushed and reading starts at its end.
	 */
	private void resumeOnAnotherServer(RedisClusterCommands<String, String> redis) {
		if (this.lastSequence >= 0) {
			List<StreamMessage<String, String>> last = redis.xrange(this.stream,
					Range.create(this.lastId, this.lastId), Limit.from(1));
			if (!last.isEmpty() && String.valueOf(this.lastSequence).equals(last.get(0).getBody().get("seq"))) {
				return;
			}
		}
		this.flush.accept("another server holds the invalidation stream without the last message read");
		startFromTheEnd(redis);
	}

	/**
	 * Starts after the stream's last message; the next one must follow the counter's number, read in the same
	 * transaction.
	 */
	private void startFromTheEnd(RedisClusterCommands<String, String> redis) {
		List<Object> result = redis.eval(LAST_MESSAGE_AND_COUNTER, ScriptOutputType.MULTI, this.stream,
				InvalidationStream.sequenceKey(this.stream));
		// After the script: a value read from now on postdates every message before the start.
		this.watermark.listeningFrom(this.watermark.now());
		this.lastId = String.valueOf(result.get(0));
		this.lastSequence = Long.parseLong(String.valueOf(result.get(1)));
	}

}
