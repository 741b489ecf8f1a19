package dev.concertcache.api.capture;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.concertcache.testsupport.DatabaseServer;
import dev.concertcache.testsupport.MariaDbServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server position the reader confirms against, read every progress interval (ADR 0039). A server of its own:
 * the test counts the statements it receives.
 */
@ExtendWith(OutputCaptureExtension.class)
class PositionProbeTests {

	private static final BinlogPosition GTID_KIND = BinlogPosition.gtid("any", "0-1-1");

	private static MariaDbServer server;

	private static BinlogServer binlog;

	@BeforeAll
	static void server() throws SQLException {
		server = new MariaDbServer();
		server.start();
		binlog = new BinlogServer("127.0.0.1", server.port(), DatabaseServer.USER, DatabaseServer.PASSWORD,
				Duration.ofSeconds(5), SslMode.DISABLE);
		execute("CREATE TABLE IF NOT EXISTS probed (id INT PRIMARY KEY)");
	}

	@AfterAll
	static void removeServer() {
		server.close();
	}

	@Test
	void aCommitIsWithinTheNextPositionRead() throws SQLException {
		try (BinlogServer.PositionProbe probe = binlog.positionProbe()) {
			BinlogPosition before = probe.read(GTID_KIND);
			execute("REPLACE INTO probed VALUES (1)");
			BinlogPosition after = probe.read(GTID_KIND);
			assertThat(after.gtidSet()).isEqualTo(query("SELECT @@GLOBAL.gtid_binlog_pos"));
			assertThat(after.includes(before)).isTrue();
			assertThat(before.includes(after)).isFalse();
		}
	}

	@Test
	void whileNothingIsCommittedTheGtidPositionIsReadOnceNotEveryTime() throws SQLException {
		try (BinlogServer.PositionProbe probe = binlog.positionProbe()) {
			long variablesShown = showVariablesCount();
			BinlogPosition first = probe.read(GTID_KIND);
			for (int i = 0; i < 19; i++) {
				assertThat(probe.read(GTID_KIND)).isEqualTo(first);
			}
			assertThat(showVariablesCount() - variablesShown).isEqualTo(1);
		}
	}

	@Test
	void aMariaDbServerIsAskedForItsBinaryLogsEndInItsOwnWordsWithoutASyntaxErrorFirst(CapturedOutput output)
			throws SQLException {
		try (BinlogServer.PositionProbe probe = new BinlogServer("127.0.0.1", server.port(), DatabaseServer.USER,
				DatabaseServer.PASSWORD, Duration.ofSeconds(5), SslMode.DISABLE)
			.positionProbe()) {
			long shown = statusCount("COM_SHOW_BINLOG_STATUS");
			probe.read(BinlogPosition.file("any", "any", 0));
			assertThat(statusCount("COM_SHOW_BINLOG_STATUS") - shown).isEqualTo(1);
		}
		assertThat(output).doesNotContain("SQL syntax");
	}

	private static long statusCount(String variable) throws SQLException {
		return Long.parseLong(query("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
				+ "WHERE VARIABLE_NAME = '" + variable + "'"));
	}

	private static long showVariablesCount() throws SQLException {
		return Long.parseLong(query("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
				+ "WHERE VARIABLE_NAME = 'COM_SHOW_VARIABLES'"));
	}

	private static void execute(String sql) throws SQLException {
		try (Connection connection = connect(); Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

	private static String query(String sql) throws SQLException {
		try (Connection connection = connect(); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery(sql)) {
			rs.next();
			return rs.getString(1);
		}
	}

	private static Connection connect() throws SQLException {
		return DriverManager.getConnection(server.jdbcUrl(), DatabaseServer.USER, DatabaseServer.PASSWORD);
	}

}
