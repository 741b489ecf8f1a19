package dev.concertcache.api;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;

import dev.concertcache.tiered.loader.LoaderFailures;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The stated waits of a request that needs the database (ADR 0030): 250 ms for a pool connection, 1 s for a
 * statement run through {@code JdbcClient} (Boot applies {@code spring.jdbc.template.query-timeout} to the
 * template under it; MariaDB aborts the statement server-side), 3 s for any answer on the socket (a hung server).
 */
class DatabaseTimeoutsTests extends ApiTestSupport {

	@Test
	void poolWaitsAtMost250MillisecondsForAConnection() {
		HikariDataSource pool = (HikariDataSource) this.dataSource;
		assertThat(pool.getConnectionTimeout()).isEqualTo(250);
		assertThat(pool.getValidationTimeout()).isEqualTo(250);
		assertThat(pool.getDataSourceProperties()).containsEntry("socketTimeout", "3000")
			.containsEntry("connectTimeout", "500");
	}

	@Test
	void jdbcClientStatementsAreAbortedAfterTheQueryTimeout() {
		long started = System.nanoTime();
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> this.jdbc.sql("SELECT SLEEP(5)").query(Integer.class).optional())
			.satisfies((ex) -> assertThat(LoaderFailures.isUnavailable(ex)).as("answered with 503").isTrue());
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isBetween(Duration.ofMillis(900),
				Duration.ofMillis(2_500));
	}

	@Test
	void aStatementWithoutQueryTimeoutStillFailsWhenTheSocketStaysSilent() throws SQLException {
		try (Connection connection = this.dataSource.getConnection();
				Statement statement = connection.createStatement()) {
			long started = System.nanoTime();
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> statement.executeQuery("SELECT SLEEP(10)"))
				.satisfies((ex) -> assertThat(LoaderFailures.isUnavailable(ex)).isTrue());
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isBetween(Duration.ofMillis(2_900),
					Duration.ofMillis(6_000));
		}
	}

}
