package dev.concertcache.api.capture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.concertcache.testsupport.DatabaseServer;
import dev.concertcache.testsupport.MySqlServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The MySQL server settings of docs/adopting.md, exactly as they stand, on MySQL 9.7: the server starts with them
 * alone, has each one set, and the capture's start-up check finds nothing missing.
 */
class MySqlDocumentedSettingsTests {

	private static MySqlServer server;

	@BeforeAll
	static void serverWithTheDocumentedSettings() throws IOException {
		server = MySqlServer.withOptionFile(documentedSettings());
		server.start();
	}

	@AfterAll
	static void removeServer() {
		server.close();
	}

	@Test
	void theServerHasEachDocumentedSettingSet() throws SQLException {
		try (Connection connection = DriverManager.getConnection(server.jdbcUrl(), DatabaseServer.USER,
				DatabaseServer.PASSWORD); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT @@log_bin, @@log_bin_basename, @@binlog_format, "
						+ "@@binlog_row_image, @@server_id, @@binlog_expire_logs_seconds, @@gtid_mode, "
						+ "@@enforce_gtid_consistency, VERSION()")) {
			rs.next();
			assertThat(rs.getString(1)).isEqualTo("1");
			assertThat(rs.getString(2)).endsWith("/mysql-bin");
			assertThat(rs.getString(3)).isEqualTo("ROW");
			assertThat(rs.getString(4)).isEqualTo("FULL");
			assertThat(rs.getLong(5)).isEqualTo(1);
			assertThat(rs.getLong(6)).isEqualTo(604800);
			assertThat(rs.getString(7)).isEqualTo("ON");
			assertThat(rs.getString(8)).isEqualTo("ON");
			assertThat(rs.getString(9)).startsWith("9.7.");
		}
	}

	@Test
	void theStartUpCheckFindsNothingMissingAndThePositionIsAGtidSet() throws SQLException {
		BinlogServer binlog = new BinlogServer("127.0.0.1", server.port(), DatabaseServer.USER,
				DatabaseServer.PASSWORD, Duration.ofSeconds(5), SslMode.DISABLE);
		assertThat(binlog.problems()).isEmpty();
		assertThat(binlog.currentPosition().gtidSet()).matches("[0-9a-f-]{36}:1-\\d+");
	}

	/** The {@code [mysqld]} block of docs/adopting.md's section on the server. */
	private static String documentedSettings() throws IOException {
		Path docs = Path.of("").toAbsolutePath();
		while (!Files.exists(docs.resolve("docs/adopting.md"))) {
			docs = docs.getParent();
		}
		Matcher block = Pattern.compile("```ini\n(\\[mysqld\\]\n.*?)```", Pattern.DOTALL)
			.matcher(Files.readString(docs.resolve("docs/adopting.md")));
		assertThat(block.find()).as("a [mysqld] block in docs/adopting.md").isTrue();
		return block.group(1);
	}

}
