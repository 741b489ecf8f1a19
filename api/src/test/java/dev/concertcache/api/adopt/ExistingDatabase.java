package dev.concertcache.api.adopt;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import dev.concertcache.testsupport.DatabaseServer;

/**
 * A team's existing database, prepared the way docs/adopting.md says: statements run as the server's root (the
 * DBA), on the JVM's shared private MariaDB or MySQL, in databases of their own so that the service's usual
 * {@code concert_cache} schema is not touched.
 */
final class ExistingDatabase {

	/** The read-only account the service connects with in these tests. */
	static final String READER = "cache_reader";

	static final String READER_PASSWORD = "reader-secret";

	/** The server of the test class running now: each sets it as its context starts. */
	private static DatabaseServer server;

	private ExistingDatabase() {
	}

	static void use(DatabaseServer database) {
		server = database;
	}

	static String jdbcUrl(String database) {
		return server.jdbcUrl(database);
	}

	/** A client connected as root, without a default database. */
	static JdbcClient root() {
		// MySQL 9 explains as a tree by default; the tests read the table both servers print.
		String url = (server.flavor() == DatabaseServer.Flavor.MYSQL)
				? jdbcUrl("") + "&sessionVariables=explain_format=TRADITIONAL" : jdbcUrl("");
		return JdbcClient.create(new SimpleDriverDataSource(new org.mariadb.jdbc.Driver(), url, "root", ""));
	}

	/** Runs each statement as root, in order. */
	static void asRoot(String... statements) {
		JdbcClient root = root();
		for (String sql : statements) {
			root.sql(sql).update();
		}
	}

	/** The two tables as a team might have declared them by hand: the columns the service reads, no FK, no CHECK. */
	static void createHandMadeSchema(String database) {
		asRoot("DROP DATABASE IF EXISTS " + database,
				"CREATE DATABASE " + database + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", """
						CREATE TABLE %s.concert (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
						  title VARCHAR(200) NOT NULL, artist VARCHAR(200) NOT NULL, venue VARCHAR(200) NOT NULL,
						  description TEXT NOT NULL, start_date DATE NOT NULL, end_date DATE NOT NULL,
						  created_at DATETIME(3) NOT NULL, updated_at DATETIME(3) NOT NULL)""".formatted(database),
				"""
						CREATE TABLE %s.schedule (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
						  concert_id BIGINT NOT NULL, starts_at DATETIME NOT NULL, total_seats INT NOT NULL,
						  KEY idx_schedule_concert_starts (concert_id, starts_at))""".formatted(database));
	}

	/** One concert (7) with one schedule (70, 15000 seats), replacing what the two tables held. */
	static void insertGoldenHour(String database) {
		asRoot("DELETE FROM " + database + ".schedule", "DELETE FROM " + database + ".concert",
				"INSERT INTO " + database + ".concert VALUES (7, 'Golden Hour', 'IU', 'KSPO Dome', 'Seoul', "
						+ "'2026-12-24', '2026-12-26', NOW(3), '2026-11-01 10:00:00')",
				"INSERT INTO " + database + ".schedule VALUES (70, 7, '2026-12-24 10:00:00', 15000)");
	}

	/** The docs' read-only user: SELECT on the service's schema, nothing else. */
	static void createReader(String database) {
		asRoot("CREATE USER IF NOT EXISTS '" + READER + "'@'%' IDENTIFIED BY '" + READER_PASSWORD + "'",
				"GRANT SELECT ON " + database + ".* TO '" + READER + "'@'%'");
	}

}
