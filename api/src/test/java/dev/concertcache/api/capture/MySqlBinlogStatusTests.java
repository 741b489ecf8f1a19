package dev.concertcache.api.capture;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLSyntaxErrorException;
import java.sql.Statement;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.concertcache.testsupport.DatabaseServer;
import dev.concertcache.testsupport.MySqlServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * MySQL 8.2 renamed {@code SHOW MASTER STATUS} to {@code SHOW BINARY LOG STATUS}, and 8.4 dropped the old name,
 * which MariaDB and MySQL 8.0 still use: on a MySQL 9.7 server without GTIDs the capture's position is the file
 * and offset the new name reports. A server of its own: GTIDs off.
 */
class MySqlBinlogStatusTests {

	private static MySqlServer server;

	@BeforeAll
	static void serverWithoutGtids() {
		server = new MySqlServer("--gtid-mode=OFF", "--enforce-gtid-consistency=OFF");
		server.start();
	}

	@AfterAll
	static void removeServer() {
		server.close();
	}

	@Test
	void theServerRefusesTheOldNameOfTheStatusStatement() throws SQLException {
		try (Connection connection = connect(); Statement statement = connection.createStatement()) {
			assertThatExceptionOfType(SQLSyntaxErrorException.class)
				.isThrownBy(() -> statement.executeQuery("SHOW MASTER STATUS"));
		}
	}

	@Test
	void withoutGtidsTheServersPositionIsTheFileAndOffsetOfShowBinaryLogStatus() throws SQLException {
		BinlogServer binlog = new BinlogServer("127.0.0.1", server.port(), DatabaseServer.USER,
				DatabaseServer.PASSWORD, Duration.ofSeconds(5), SslMode.DISABLE);
		try (Connection connection = connect(); Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE IF NOT EXISTS status_probe (id INT PRIMARY KEY)");
			statement.execute("REPLACE INTO status_probe VALUES (1)");
			try (ResultSet rs = statement.executeQuery("SHOW BINARY LOG STATUS")) {
				rs.next();
				assertThat(binlog.currentPosition()).isEqualTo(BinlogPosition.file("127.0.0.1:" + server.port(),
						rs.getString("File"), rs.getLong("Position")));
			}
		}
		assertThat(binlog.problems()).isEmpty();
	}

	private static Connection connect() throws SQLException {
		return DriverManager.getConnection(server.jdbcUrl(), DatabaseServer.USER, DatabaseServer.PASSWORD);
	}

}
