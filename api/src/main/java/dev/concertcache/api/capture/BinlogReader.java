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
 * One binlog connection's listener: collects the row changes of each transaction of the captured tables and, at
 * its commit, hands them with the position after it to the lander. It never throws (the client would log, swallow
 * and move on): a failure ends the connection, and the capture resumes from the checkpoint.
 */
final class BinlogReader extends BinaryLogClient.AbstractLifecycleListener implements BinaryLogClient.EventListener {

	private static final Log logger = LogFactory.getLog(BinlogReader.class);

	private final BinaryLogClient client;

	private final String serverAddress;

	private final CapturedTables tables;

	private final CaptureMetrics metrics;

	/** Called once the connection is open; it ends the connection if the capture stopped meanwhile. */
	private final Consumer<BinlogReader> connected;

	/** Called after each commit, once the lander has it: lands it soon. */
	private final Runnable committed;

	private @Nullable Lander lander;

	private TransactionChanges changes = new TransactionChanges();

	private volatile @Nullable Exception failure;

	BinlogReader(BinaryLogClient client, String serverAddress, CapturedTables tables, CaptureMetrics metrics,
			Consumer<BinlogReader> connected, Runnable committed) {
		this.client = client;
		this.serverAddress = serverAddress;
		this.tables = tables;
		this.metrics = metrics;
		this.connected = connected;
		this.committed = committed;
	}

	/** Where commits go; set before the connection opens. */
	void landInto(Lander lander) {
		this.lander = lander;
	}

	/** Why the connection ended, {@code null} while it has not. */
	@Nullable Exception failure() {
		return this.failure;
	}

	/** Ends the connection for {@code why}, unless it ended already. */
	void end(Exception why) {
		if (this.failure == null) {
			this.failure = why;
		}
		try {
			this.client.disconnect();
		}
		catch (IOException ex) {
			logger.debug("Closing the binlog connection failed", ex);
		}
	}

	@Override
	public void onConnect(BinaryLogClient client) {
		this.connected.accept(this);
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
	 * ticketing application's orders, say) are skipped. A captured row this reader cannot map makes every entry
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
		this.committed.run();
	}

}
