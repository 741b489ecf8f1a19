package dev.concertcache.api.capture;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import com.github.shyiko.mysql.binlog.network.SSLMode;
import org.jspecify.annotations.Nullable;

/**
 * The database server whose binary log is read, over plain JDBC with the capture credentials: its settings and
 * grants (the start-up check), its current position, and the column positions of the captured tables.
 */
class BinlogServer {

	/** MySQL 8.2 renamed {@code SHOW MASTER STATUS}, and 8.4 dropped the old name, which MariaDB still uses. */
	private static final List<String> STATUS_STATEMENTS = List.of("SHOW BINARY LOG STATUS", "SHOW MASTER STATUS");

	private final String host;

	private final int port;

	private final String username;

	private final String password;

	private final Duration timeout;

	private final SslMode sslMode;

	/** The statement that reports the binary log's end on this server, once one has: each knows only one. */
	private volatile @Nullable String statusStatement;

	BinlogServer(String host, int port, String username, String password, Duration timeout) {
		this(host, port, username, password, timeout, SslMode.DISABLE);
	}

	BinlogServer(String host, int port, String username, String password, Duration timeout,
			SslMode sslMode) {
		this.host = host;
		this.port = port;
		this.username = username;
		this.password = password;
		this.timeout = timeout;
		this.sslMode = sslMode;
	}

	String host() {
		return this.host;
	}

	int port() {
		return this.port;
	}

	String username() {
		return this.username;
	}

	String password() {
		return this.password;
	}

	/** The binary log connection's TLS, as the check's JDBC connection has it. */
	SSLMode sslMode() {
		return switch (this.sslMode) {
			case DISABLE -> SSLMode.DISABLED;
			case TRUST -> SSLMode.REQUIRED;
			case VERIFY_CA -> SSLMode.VERIFY_CA;
			case VERIFY_FULL -> SSLMode.VERIFY_IDENTITY;
		};
	}

	/** {@code host:port}, the identity a checkpoint carries. */
	String address() {
		return this.host + ":" + this.port;
	}

	/**
	 * What keeps the binary log from being read, each with the setting to change or the GRANT to run; empty if
	 * nothing does. The replication connection itself is tried by the caller.
	 */
	List<String> problems() {
		List<String> problems = new ArrayList<>();
		try (Connection connection = connect(); Statement statement = connection.createStatement()) {
			String logBin;
			String format;
			String rowImage;
			try (ResultSet rs = statement
				.executeQuery("SELECT @@log_bin, @@binlog_format, @@binlog_row_image, CURRENT_USER()")) {
				rs.next();
				logBin = rs.getString(1);
				format = rs.getString(2);
				rowImage = rs.getString(3);
			}
			boolean mariaDb = isMariaDb(connection);
			if (!"1".equals(logBin) && !"ON".equalsIgnoreCase(logBin)) {
				problems.add("the binary log is off (log_bin=" + logBin + "): start the server with --log-bin "
						+ "(log_bin in its configuration; a restart is needed)");
			}
			if (!"ROW".equalsIgnoreCase(format)) {
				problems.add("binlog_format is " + format + ", not ROW: statement-logged changes carry no rows; "
						+ "set binlog_format=ROW in the server configuration and run SET GLOBAL binlog_format = 'ROW'");
			}
			if (!"FULL".equalsIgnoreCase(rowImage)) {
				problems.add("binlog_row_image is " + rowImage + ", not FULL: set binlog_row_image=FULL in the server "
						+ "configuration and run SET GLOBAL binlog_row_image = 'FULL'");
			}
			try {
				statement.executeQuery("SHOW BINARY LOGS").close();
			}
			catch (SQLException ex) {
				// Both grants in one statement: a user without this one usually lacks REPLICATION SLAVE as well,
				// and granting a privilege held already is harmless.
				problems.add("SHOW BINARY LOGS fails (" + ex.getMessage() + "): run GRANT REPLICATION SLAVE, "
						+ (mariaDb ? "BINLOG MONITOR" : "REPLICATION CLIENT") + " ON *.* TO " + grantee(connection));
			}
		}
		catch (SQLException ex) {
			problems.add("cannot query " + address() + " as '" + this.username + "': " + ex.getMessage());
		}
		return problems;
	}

	/** The GRANT that lets the capture user read the binary log over a replication connection. */
	String replicationGrant() {
		try (Connection connection = connect()) {
			return "GRANT REPLICATION SLAVE ON *.* TO " + grantee(connection);
		}
		catch (SQLException ex) {
			return "GRANT REPLICATION SLAVE ON *.* TO '" + this.username + "'@'<host>'";
		}
	}

	/** The server's position now: its GTID set where it has GTIDs, else its current file and offset. */
	BinlogPosition currentPosition() throws SQLException {
		try (PositionProbe probe = positionProbe()) {
			return probe.current();
		}
	}

	/**
	 * A connection held open to read the server's position several times a second (ADR 0039): every transaction
	 * committed before a read is within the position it returns.
	 */
	PositionProbe positionProbe() {
		return new PositionProbe();
	}

	/**
	 * The 0-based position among the columns of {@code schema.table} of {@code column}, as rows events list them.
	 * @throws IllegalStateException if there is no such column
	 */
	int columnIndex(String schema, String table, String column) throws SQLException {
		try (Connection connection = connect();
				var statement = connection.prepareStatement("SELECT ORDINAL_POSITION FROM INFORMATION_SCHEMA.COLUMNS "
						+ "WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?")) {
			statement.setString(1, schema);
			statement.setString(2, table);
			statement.setString(3, column);
			try (ResultSet rs = statement.executeQuery()) {
				if (!rs.next()) {
					throw new IllegalStateException("No column " + column + " in " + schema + "." + table
							+ " visible to '" + this.username + "' (concert-cache.capture.tables.*)");
				}
				return rs.getInt(1) - 1;
			}
		}
	}

	/**
	 * The server's position in the kind of another, over one connection, opened again after a failure. With
	 * {@code SHOW} statements, not {@code SELECT}s: what the database's {@code Com_select} counts stays the
	 * application's reads.
	 */
	final class PositionProbe implements AutoCloseable {

		private Connection connection;

		/** The variable that holds the GTID position (MariaDB's, or MySQL's with GTIDs on); {@code null} for none. */
		private @Nullable String gtidVariable;

		/** The binary log's end when the GTID position was last read, just before it; {@code null} for not yet. */
		private @Nullable BinlogPosition end;

		/** The GTID position read right after {@link #end}: it holds every transaction up to there. */
		private String gtidAtEnd = "";

		/**
		 * The server's position now, in the notation a reader starting now would use: its GTID set where it has
		 * GTIDs, else its current file and offset. Every transaction committed before the call is within it.
		 */
		synchronized BinlogPosition current() throws SQLException {
			String gtid = gtid();
			return gtid.isBlank() ? file() : BinlogPosition.gtid(address(), gtid);
		}

		/**
		 * The server's position now, a GTID set if {@code kind} is one, else a file and offset: comparable with
		 * positions the reader reached.
		 */
		synchronized BinlogPosition read(BinlogPosition kind) throws SQLException {
			if (kind.gtidSet() == null) {
				return file();
			}
			// Every commit moves the binary log's end. While it has not moved, the GTID position read after it last
			// time still holds everything committed: a status statement costs the server a fraction of reading a
			// global variable with SHOW, and this runs every progress interval (ADR 0201).
			BinlogPosition end = file();
			if (!end.equals(this.end)) {
				this.gtidAtEnd = gtid();
				this.end = end;
			}
			return BinlogPosition.gtid(address(), this.gtidAtEnd);
		}

		/** The server's GTID position; blank where it has none. */
		private String gtid() throws SQLException {
			Connection connection = open();
			if (this.gtidVariable == null) {
				return "";
			}
			try (Statement statement = connection.createStatement();
					ResultSet rs = statement.executeQuery("SHOW GLOBAL VARIABLES LIKE '" + this.gtidVariable + "'")) {
				String gtid = rs.next() ? rs.getString(2) : null;
				return (gtid != null) ? gtid.replace("\n", "") : "";
			}
			catch (SQLException ex) {
				close();
				throw ex;
			}
		}

		private BinlogPosition file() throws SQLException {
			try (Statement statement = open().createStatement()) {
				return filePosition(statement);
			}
			catch (SQLException ex) {
				close();
				throw ex;
			}
		}

		private Connection open() throws SQLException {
			if (this.connection == null) {
				this.connection = connect();
				this.gtidVariable = isMariaDb(this.connection) ? "gtid_binlog_pos"
						: "ON".equalsIgnoreCase(variable(this.connection, "gtid_mode")) ? "gtid_executed" : null;
			}
			return this.connection;
		}

		@Override
		public synchronized void close() {
			if (this.connection != null) {
				try {
					this.connection.close();
				}
				catch (SQLException ex) {
					// Gone already.
				}
				this.connection = null;
			}
			// The server behind the address may have been replaced: read its GTID position again.
			this.end = null;
		}

	}

	private BinlogPosition filePosition(Statement statement) throws SQLException {
		SQLException failure = null;
		String known = this.statusStatement;
		for (String query : (known != null) ? List.of(known) : STATUS_STATEMENTS) {
			try (ResultSet rs = statement.executeQuery(query)) {
				if (rs.next()) {
					this.statusStatement = query;
					return BinlogPosition.file(address(), rs.getString("File"), rs.getLong("Position"));
				}
				throw new SQLException(query + " returned no row: the binary log is off");
			}
			catch (SQLException ex) {
				failure = ex;
			}
		}
		// Another server may answer at the address next time: try each statement again.
		this.statusStatement = null;
		throw failure;
	}

	/**
	 * {@code allowPublicKeyRetrieval}: a MySQL user of {@code caching_sha2_password} (MySQL 8.4's and 9's default)
	 * logging in for the first time since the server started sends its password over TLS or, without TLS
	 * ({@code ssl-mode: disable}), encrypted with the server's RSA key, which the binlog connection fetches from the
	 * server as well.
	 */
	private Connection connect() throws SQLException {
		long millis = this.timeout.toMillis();
		return DriverManager.getConnection("jdbc:mariadb://" + this.host + ":" + this.port + "/?connectTimeout="
				+ millis + "&socketTimeout=" + millis + "&allowPublicKeyRetrieval=true&sslMode="
				+ this.sslMode.name().toLowerCase(Locale.ROOT).replace('_', '-'), this.username, this.password);
	}

	private static boolean isMariaDb(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			return single(statement, "SELECT VERSION()").toLowerCase(Locale.ROOT).contains("mariadb");
		}
	}

	private static @Nullable String variable(Connection connection, String name) throws SQLException {
		try (Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SHOW GLOBAL VARIABLES LIKE '" + name + "'")) {
			return rs.next() ? rs.getString(2) : null;
		}
	}

	private static String grantee(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			String user = single(statement, "SELECT CURRENT_USER()");
			int at = user.lastIndexOf('@');
			return "'" + user.substring(0, at) + "'@'" + user.substring(at + 1) + "'";
		}
	}

	private static String single(Statement statement, String query) throws SQLException {
		try (ResultSet rs = statement.executeQuery(query)) {
			return rs.next() ? rs.getString(1) : null;
		}
	}

}
