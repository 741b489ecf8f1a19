package dev.concertcache.api.capture;

import java.io.IOException;
import java.util.function.Consumer;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.event.DeleteRowsEventData;
import com.github.shyiko.mysql.binlog.event.Event;
import com.github.shyiko.mysql.binlog.event.EventHeaderV4;
import com.github.shyiko.mysql.binlog.event.QueryEventData;
import com.github.shyiko.mysql.binlog.event.UpdateRowsEventData;
import com.github.shyiko.mysql.binlog.event.WriteRowsEventData;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.concertcache.api.capture.CapturedTables.Kind;
import dev.concertcache.api.capture.CapturedTables.Table;

/**
 * One replication connection, read from a position until it ends. As its client's listener it collects the row
 * changes of each transaction of the captured tables and, at its commit, hands them with the position after it to
 * its {@link Lander}. Its listener methods never throw (the client would log, swallow and move on): a failure ends
 * the connection, and what did not land is replayed by the next one, from the checkpoint.
 */
final class BinlogConnection extends BinaryLogClient.AbstractLifecycleListener
		implements BinaryLogClient.EventListener, Lander.Connection {

	private static final Log logger = LogFactory.getLog(BinlogConnection.class);

	private final BinaryLogClient client;

	private final String serverAddress;

	private final CapturedTables tables;

	private final CaptureMetrics metrics;

	private final Lander lander;

	/** The capture that opened this connection. */
	private final BinlogCapture capture;

	/** On the binlog thread only. */
	private TransactionChanges changes = new TransactionChanges();

	private volatile boolean opened;

	/** Why the connection ended, {@code null} while it has not. */
	private volatile @Nullable Exception failure;

	BinlogConnection(BinaryLogClient client, String serverAddress, CapturedTables tables, CaptureMetrics metrics,
			Lander.Landing landing, BinlogPosition start, @Nullable String checkpoint, BinlogCapture capture) {
		this.client = client;
		this.serverAddress = serverAddress;
		this.tables = tables;
		this.metrics = metrics;
		this.capture = capture;
		this.lander = new Lander(this, landing, start, checkpoint);
		client.registerEventListener(this);
		client.registerLifecycleListener(this);
	}

	/** Reads until the connection ends; why it ended, {@code null} if it was closed without a failure. */
	@Nullable Exception read() {
		try {
			this.client.connect();
		}
		catch (IOException ex) {
			onCommunicationFailure(this.client, ex);
		}
		return this.failure;
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

	@Override
	public boolean ended() {
		return !this.capture.reading() || this.failure != null;
	}

	/** Ends the connection for {@code why}, unless it ended already. */
	@Override
	public void end(Exception why) {
		if (this.failure == null) {
			this.failure = why;
		}
		close();
	}

	@Override
	public void checkpointed(BinlogPosition position) {
		this.capture.checkpointed(position);
	}

	@Override
	public void onConnect(BinaryLogClient client) {
		if (!this.capture.reading()) {
			// stop() or a lost lease came between the capture's check and connect(), which close() misses.
			end(new IllegalStateException("stopped while connecting"));
			return;
		}
		this.opened = true;
		this.capture.streaming();
	}

	@Override
	public void onCommunicationFailure(BinaryLogClient client, Exception ex) {
		if (this.failure == null) {
			this.failure = ex;
		}
	}

	@Override
	public void onEventDeserializationFailure(BinaryLogClient client, Exception ex) {
		end(ex);
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
			end(ex);
		}
	}

	private void handle(Event event) throws Exception {
		EventHeaderV4 header = event.getHeader();
		switch (header.getEventType()) {
			case TABLE_MAP -> this.tables.onTableMap(event.getData());
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
		if (!sql.equalsIgnoreCase("COMMIT") && !sql.equalsIgnoreCase("ROLLBACK") && this.tables.namedIn(sql)) {
			// DDL or TRUNCATE of a captured table: logged as a statement, without rows.
			this.changes.everything();
		}
		commit(header);
	}

	/**
	 * The keys of one row event's rows, if its table is captured. Rows of every other table of the database (the
	 * ticketing application's orders, say) are skipped. A captured row this connection cannot map makes every entry
	 * stale instead of ending the stream, which would stop at the same event after every reconnect.
	 */
	private void rows(long tableId, String type, int count, Consumer<Table> keys) {
		Table table = this.tables.table(tableId);
		if (table.kind() == Kind.IGNORED) {
			return;
		}
		try {
			keys.accept(table);
		}
		catch (RuntimeException ex) {
			logger.warn("Capture: could not read the key of a row of " + table.name() + "; invalidating every cache "
					+ "for its transaction", ex);
			this.changes.everything();
		}
		this.metrics.rows(table.name(), type, count);
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
		TransactionChanges done = this.changes;
		this.changes = new TransactionChanges();
		String gtid = this.client.getGtidSet();
		BinlogPosition position = (gtid != null) ? BinlogPosition.gtid(this.serverAddress, gtid)
				: BinlogPosition.file(this.serverAddress, this.client.getBinlogFilename(), header.getNextPosition());
		this.lander.committed(done, position, header.getTimestamp(), header.getNextPosition());
		// Once the lander has it: the landing thread lands it soon.
		this.capture.committed();
	}

}
