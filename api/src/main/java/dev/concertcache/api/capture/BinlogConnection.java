package dev.concertcache.api.capture;

import java.io.IOException;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One replication connection, read from a position until it ends: its client, the {@link BinlogReader} of its
 * events and the {@link Lander} of its commits. What did not land when it ends is replayed by the next one, from
 * the checkpoint.
 */
final class BinlogConnection implements Lander.Connection {

	private static final Log logger = LogFactory.getLog(BinlogConnection.class);

	private final BinaryLogClient client;

	private final BinlogReader reader;

	private final Lander lander;

	/** The capture that opened this connection. */
	private final BinlogCapture capture;

	private volatile boolean opened;

	BinlogConnection(BinaryLogClient client, String serverAddress, CapturedTables tables, CaptureMetrics metrics,
			Lander.Landing landing, BinlogPosition start, @Nullable String checkpoint, BinlogCapture capture) {
		this.client = client;
		this.capture = capture;
		this.reader = new BinlogReader(client, serverAddress, tables, metrics, this::connected, capture::committed);
		this.lander = new Lander(this, landing, start, checkpoint);
		this.reader.landInto(this.lander);
		client.registerEventListener(this.reader);
		client.registerLifecycleListener(this.reader);
	}

	/** Reads until the connection ends; why it ended, {@code null} if it was closed without a failure. */
	@Nullable Exception read() {
		try {
			this.client.connect();
		}
		catch (IOException ex) {
			this.reader.onCommunicationFailure(this.client, ex);
		}
		return this.reader.failure();
	}

	/** Whether the server accepted the connection and it was read. */
	boolean opened() {
		return this.opened;
	}

	Lander lander() {
		return this.lander;
	}

	/** The server's id of this connection. */
	long id() {
		return this.client.getConnectionId();
	}

	/** Closes the connection; {@link #read()} returns. */
	void close() {
		try {
			this.client.disconnect();
		}
		catch (IOException ex) {
			logger.debug("Closing the binlog connection failed", ex);
		}
	}

	private void connected(BinlogReader reader) {
		if (!this.capture.reading()) {
			// stop() or a lost lease came between the capture's check and connect(), which close() misses.
			reader.end(new IllegalStateException("stopped while connecting"));
			return;
		}
		this.opened = true;
		this.capture.streaming();
	}

	@Override
	public boolean ended() {
		return !this.capture.reading() || this.reader.failure() != null;
	}

	@Override
	public void end(Exception why) {
		this.reader.end(why);
	}

	@Override
	public void checkpointed(BinlogPosition position) {
		this.capture.checkpointed(position);
	}

}
