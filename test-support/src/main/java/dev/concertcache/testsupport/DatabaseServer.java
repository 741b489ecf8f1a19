package dev.concertcache.testsupport;

import java.nio.file.Path;

/**
 * A private database server the tests start and own: {@link MariaDbServer} (MariaDB 10.11, Debian's) or
 * {@link MySqlServer} (MySQL 9.7, Debian sid's). Both hold database {@value #DATABASE} and user
 * {@value #USER}/{@value #PASSWORD} with the grants the service and its binlog capture need, and write a binary
 * log in ROW format with GTIDs.
 */
public interface DatabaseServer extends AutoCloseable {

	String DATABASE = "concert_cache";

	String USER = "concert";

	String PASSWORD = "concert";

	enum Flavor {

		MARIADB, MYSQL

	}

	Flavor flavor();

	/**
	 * The statements that make database {@value #DATABASE} and user {@value #USER} on loopback (TCP and socket), with
	 * all rights on the database and {@code globalPrivileges} on the server.
	 */
	static String databaseAndUser(String globalPrivileges) {
		StringBuilder statements = new StringBuilder("CREATE DATABASE IF NOT EXISTS " + DATABASE
				+ " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci; ");
		for (String host : new String[] { "127.0.0.1", "localhost" }) {
			String user = "'" + USER + "'@'" + host + "'";
			statements.append("CREATE USER IF NOT EXISTS ").append(user).append(" IDENTIFIED BY '").append(PASSWORD)
				.append("'; GRANT ALL ON ").append(DATABASE).append(".* TO ").append(user).append("; GRANT ")
				.append(globalPrivileges).append(" ON *.* TO ").append(user).append("; ");
		}
		return statements.toString();
	}

	/** Starts the server, or starts it again after {@link #kill()}; its data is kept. */
	void start();

	/** Kills the server (SIGKILL), as a crash would; {@link #start()} brings it back. */
	void kill();

	/** Stops the server and deletes its data. */
	@Override
	void close();

	int port();

	/** The server's Unix socket, where root logs in without a password. */
	Path socket();

	/** The JDBC URL of database {@value #DATABASE}. */
	default String jdbcUrl() {
		return jdbcUrl(DATABASE);
	}

	/** The JDBC URL of {@code database} (empty: none), with what this server's password checks need. */
	String jdbcUrl(String database);

	/** Runs {@code statements} as root, for what the test user may not do itself (CREATE USER, GRANT). */
	void sqlAsRoot(String statements);

}
