package dev.concertcache.api.capture;

import java.io.Serializable;
import java.sql.SQLException;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;

import com.github.shyiko.mysql.binlog.event.TableMapEventData;

/**
 * Which binlog table ids are the captured tables, and where their key column sits in a row image. A table id
 * changes when the table's definition does (DDL, or the server evicting it from its table cache), so the column
 * position is looked up again at each new id.
 */
class CapturedTables {

	private final BinlogServer server;

	private final String schema;

	private final CaptureProperties.Tables names;

	private final Map<Long, Table> byId = new HashMap<>();

	private final Pattern namePattern;

	CapturedTables(BinlogServer server, String schema, CaptureProperties.Tables names) {
		this.server = server;
		this.schema = schema;
		this.names = names;
		this.namePattern = Pattern.compile("(?<![\\w$])(" + Pattern.quote(names.concert()) + "|"
				+ Pattern.quote(names.schedule()) + ")(?![\\w$])", Pattern.CASE_INSENSITIVE);
	}

	/** Records the table behind {@code map}'s id; looks up the key column of a captured table. */
	void onTableMap(TableMapEventData map) throws SQLException {
		if (this.byId.containsKey(map.getTableId())) {
			return;
		}
		Table table = Table.IGNORED;
		if (this.schema.equalsIgnoreCase(map.getDatabase())) {
			if (this.names.concert().equalsIgnoreCase(map.getTable())) {
				table = new Table(Kind.CONCERT, this.names.concert(), this.server.columnIndex(map.getDatabase(),
						map.getTable(), this.names.concertId()));
			}
			else if (this.names.schedule().equalsIgnoreCase(map.getTable())) {
				table = new Table(Kind.SCHEDULE, this.names.schedule(), this.server.columnIndex(map.getDatabase(),
						map.getTable(), this.names.scheduleConcertId()));
			}
		}
		this.byId.put(map.getTableId(), table);
	}

	/** The captured table with {@code tableId}, or {@link Table#IGNORED}. */
	Table table(long tableId) {
		return this.byId.getOrDefault(tableId, Table.IGNORED);
	}

	/**
	 * Whether {@code sql} (a statement logged as text: DDL) names a captured table: as a whole identifier, so that a
	 * column such as {@code schedule_id} of another table's DDL does not flush every cache.
	 */
	boolean namedIn(String sql) {
		return this.namePattern.matcher(sql).find();
	}

	enum Kind {

		CONCERT, SCHEDULE, IGNORED

	}

	/** A table as the binlog names it: {@code name} tags metrics, {@code keyIndex} is 0-based among all columns. */
	record Table(Kind kind, String name, int keyIndex) {

		static final Table IGNORED = new Table(Kind.IGNORED, "", -1);

		/** The key of a row image that holds the columns in {@code included}, or null if it is absent. */
		Long key(Serializable[] row, BitSet included) {
			if (this.keyIndex < 0 || !included.get(this.keyIndex)) {
				return null;
			}
			Serializable value = row[included.get(0, this.keyIndex).cardinality()];
			return (value instanceof Number number) ? number.longValue() : null;
		}

	}

}
