package dev.concertcache.api.capture;

import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.network.SSLMode;
import com.github.shyiko.mysql.binlog.network.ServerException;
import org.jspecify.annotations.Nullable;

/**
 * The database server whose binary log is read, with the capture credentials: the replication clients that read it
 * and, over plain JDBC, its settings and grants (the start-up check), its current position, and the column positions
 * of the captured tables.
 */
class BinlogServer {

	/**
	 * MySQL 8.2 renamed {@code SHOW MASTER STATUS}, and 8.4 dropped the old name, which MariaDB still uses: each
	 * server's own name first, so that neither logs a syntax error at every start.
	 */
	private static final List<String> MYSQL_STATUS_STATEMENTS = List.of("SHOW BINARY LOG STATUS", "SHOW MASTER STATUS");

	private static final List<String> MARIADB_STATUS_STATEMENTS = List.of("SHOW MASTER STATUS");

	private final String host;

	private final int port;

	private final String username;

	private final String password;

	/** The capture's connect timeout: for connecting, each JDBC read, and the start-up check's first event. */
	private final Duration timeout;

	private final SslMode sslMode;

	/** The statement that reports the binary log's end on this server, once one has: each knows only one. */
	private volatile @Nullable String statusStatement;

	BinlogServer(String host, int port, String username, String password, Duration timeout, SslMode sslMode) {
		this.host = host;
		this.port = port;
		this.username = username;
		this.password = password;
		this.timeout = timeout;
		this.sslMode = sslMode;
	}

	/** {@code host:port}, the identity a checkpoint carries. */
	String address() {
		return this.host + ":" + this.port;
	}

	/** A client that reads from {@code position} as replica {@code serverId}; not connected yet. */
	BinaryLogClient client(BinlogPosition position, long serverId) {
		BinaryLogClient client = new BinaryLogClient(this.host, this.port, this.username, this.password);
		client.setServerId(serverId);
		client.setSSLMode(sslMode());
		// The capture's own loop reconnects, always from the checkpoint, never from the client's in-memory one.
		client.setKeepAlive(false);
		client.setConnectTimeout(this.timeout.toMillis());
		// The server sends a heartbeat when idle, so that a silently dead connection is noticed.
		client.setHeartbeatInterval(this.timeout.toMillis() / 2);
		position.applyTo(client);
		return client;
	}

	/** The binary log connection's TLS, as the check's JDBC connection has it. */
	private SSLMode sslMode() {
		return switch (this.sslMode) {
			case DISABLE -> SSLMode.DISABLED;
			case TRUST -> SSLMode.REQUIRED;
			case VERIFY_CA -> SSLMode.VERIFY_CA;
			case VERIFY_FULL -> SSLMode.VERIFY_IDENTITY;
		};
	}

	/**
	 * What keeps the capture from reading the binary log: the server's settings, the grant, and a first event read
	 * within the connect timeout; empty if nothing does.
	 */
	List<String> startupProblems() {
		List<String> problems = problems();
		if (!problems.isEmpty()) {
			return problems;
		}
		try {
			tryReplicationConnection();
			return List.of();
		}
		catch (ServerException ex) {
			return List.of("the replication connection was refused (" + ex.getMessage() + "): run "
					+ replicationGrant());
		}
		catch (Exception ex) {
			return List.of("the replication connection failed: " + ex);
		}
	}

	/** Opens a replication connection at the current position and waits for its first event. */
	private void tryReplicationConnection() throws Exception {
		// An id of its own: the server drops an older connection that shares the reader's id.
		BinaryLogClient probe = client(currentPosition(), CaptureConfiguration.randomServerId());
		CompletableFuture<Exception> outcome = new CompletableFuture<>();
		probe.registerEventListener((event) -> outcome.complete(null));
		probe.registerLifecycleListener(new BinaryLogClient.AbstractLifecycleListener() {
			@Override
			public void onCommunicationFailure(BinaryLogClient client, Exception ex) {
				outcome.complete(ex);
			}
		});
		DaemonThreads.named("binlog-capture-check").newThread(() -> {
			try {
				probe.connect();
			}
			catch (Exception ex) {
				outcome.complete(ex);
			}
			outcome.complete(new IOException("the server closed the replication connection"));
		}).start();
		try {
			Exception failure = outcome.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			if (failure != null) {
				throw failure;
			}
		}
		catch (TimeoutException ex) {
			throw new IOException("no binlog event within " + this.timeout);
		}
		finally {
			probe.disconnect();
		}
	}

	/**
	 * What keeps the binary log from being read, each with the setting to change or the GRANT to run; empty if
	 * nothing does. The replication connection itself is tried by {@link #startupProblems()}.
	 */
	List<String> problems() {
		List<String> problems = new ArrayList<>();
		try (Connection connection = connect(); Statement statement = connection.createStatement()) {
			String logBin;
			String format;
			String rowImage;
			try (ResultSet rs = statement.executeQuery("SELECT @@log_bin, @@binlog_format, @@binlog_row_image")) {
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
	private String replicationGrant() {
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

	/** A connection held open to read the server's position several times a second (ADR 0039). */
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
	 * Reads the server's position over one connection, opened again after a failure. With {@code SHOW} statements,
	 * not {@code SELECT}s: what the database's {@code Com_select} counts stays the application's reads.
	 */
	final class PositionProbe implements AutoCloseable {

		private Connection connection;

		/** Whether the connected server is MariaDB, which names its statements and GTIDs its own way. */
		private boolean mariaDb;

		/** The variable that holds the GTID position (MariaDB's, or MySQL's with GTIDs on); {@code null} for none. */
		private @Nullable String gtidVariable;

		/** The binary log's end when the GTID position was last read, just before it; {@code null} for not yet. */
		private @Nullable BinlogPosition end;

		/** The GTID position read right after {@link #end}: it holds every transaction up to there. */
		private String gtidAtEnd = "";

		/** As {@link BinlogServer#currentPosition()}: every transaction committed before the call is within it. */
		synchronized BinlogPosition current() throws SQLException {
			String gtid = gtid();
			return gtid.isBlank() ? file() : BinlogPosition.gtid(address(), gtid);
		}

		/** The server's position now, in the notation of {@code kind}: comparable with positions the reader reached. */
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
				SQLException failure = null;
				String known = BinlogServer.this.statusStatement;
				for (String query : (known != null) ? List.of(known)
						: this.mariaDb ? MARIADB_STATUS_STATEMENTS : MYSQL_STATUS_STATEMENTS) {
					try (ResultSet rs = statement.executeQuery(query)) {
						if (rs.next()) {
							BinlogServer.this.statusStatement = query;
							return BinlogPosition.file(address(), rs.getString("File"), rs.getLong("Position"));
						}
						throw new SQLException(query + " returned no row: the binary log is off");
					}
					catch (SQLException ex) {
						failure = ex;
					}
				}
				// Another server may answer at the address next time: try each statement again.
				BinlogServer.this.statusStatement = null;
				throw failure;
			}
			catch (SQLException ex) {
				close();
				throw ex;
			}
		}

		private Connection open() throws SQLException {
			if (this.connection == null) {
				this.connection = connect();
				this.mariaDb = isMariaDb(this.connection);
				this.gtidVariable = this.mariaDb ? "gtid_binlog_pos"
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

	/**
	 * {@code allowPublicKeyRetrieval}: without TLS ({@code ssl-mode: disable}), a MySQL {@code caching_sha2_password}
	 * user (8.4's and 9's default) logging in first since the server started sends its password encrypted with the
	 * server's RSA key, fetched from the server as the binlog connection fetches it.
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
