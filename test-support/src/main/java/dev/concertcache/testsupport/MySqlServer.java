package dev.concertcache.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A private MySQL 9.7 {@code mysqld} with its own data directory, on a free loopback port, with database
 * {@value #DATABASE} and user {@value #USER}/{@value #PASSWORD}: the binary log in ROW format with full row
 * images and GTIDs on, as the README's {@code [mysqld]} lines set it.
 * <p>
 * Debian 12 ships no MySQL, and Debian sid's {@code mysqld} needs a newer C library than the host's, so the
 * server runs chrooted into a sid root file system that {@code scripts/mysql-rootfs.sh} makes once per machine
 * (in {@code $CONCERT_CACHE_MYSQL_ROOTFS}, default {@code ~/.cache/concert-cache/mysql-rootfs}); the first
 * server made on a machine without one runs that script. The chroot shares the host's loopback, so clients
 * reach the server on 127.0.0.1. Needs root (chroot).
 */
public final class MySqlServer extends ServerProcess implements DatabaseServer {

	/** What the tests and the capture do: read the binary log, purge it, read global status, kill connections. */
	private static final String GLOBAL_PRIVILEGES = "PROCESS, REPLICATION CLIENT, REPLICATION SLAVE, RELOAD, "
			+ "BINLOG_ADMIN, SESSION_VARIABLES_ADMIN";

	private static MySqlServer shared;

	private final Path rootfs;

	private final List<String> options;

	/** A team's server settings read instead of the binary log settings above; {@code null}: those. */
	private final String optionFile;

	private boolean installed;

	/**
	 * A server started with {@code options} after the defaults, which they override (the last of an option wins):
	 * {@code --skip-log-bin}, {@code --binlog-format=STATEMENT}, {@code --gtid-mode=OFF}.
	 */
	public MySqlServer(String... options) {
		this(MySqlRootfs.ready(), null, options);
	}

	private MySqlServer(Path rootfs, String optionFile, String... options) {
		super("mysql", rootfs.resolve("tmp"));
		this.rootfs = rootfs;
		this.optionFile = optionFile;
		this.options = List.of(options);
	}

	/**
	 * A server whose binary log is set up by {@code optionFile} alone (the text of a {@code my.cnf}, as a team's
	 * server reads its own); the command line still sets what is per instance (port, directories).
	 */
	public static MySqlServer withOptionFile(String optionFile) {
		return new MySqlServer(MySqlRootfs.ready(), optionFile);
	}

	/** One server for the whole test JVM, shared by every suite that runs against MySQL. */
	public static synchronized MySqlServer shared() {
		if (shared == null) {
			shared = new MySqlServer();
		}
		shared.start();
		return shared;
	}

	/** {@code host}, a path on this machine inside the root file system, as the chrooted server sees it. */
	private String rootfsPath(Path host) {
		return "/" + this.rootfs.relativize(host.toAbsolutePath());
	}

	@Override
	public Flavor flavor() {
		return Flavor.MYSQL;
	}

	@Override
	public synchronized void start() {
		if (!this.installed) {
			if (this.optionFile != null) {
				writeOptionFile();
			}
			MySqlRootfs.copyInitializedData(this.rootfs, this.dir.resolve("data"));
			this.installed = true;
			super.start();
			// Root over TCP too, as MariaDB's install makes it: the tests' DBA statements go over JDBC.
			sqlAsRoot("CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY ''; "
					+ "GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION; "
					+ DatabaseServer.databaseAndUser(GLOBAL_PRIVILEGES));
			return;
		}
		super.start();
	}

	/**
	 * {@code allowPublicKeyRetrieval}: MySQL's default {@code caching_sha2_password} sends the password, on a
	 * user's first login since the server started, only over TLS or encrypted with the server's RSA key.
	 */
	@Override
	public String jdbcUrl(String database) {
		return "jdbc:mariadb://127.0.0.1:" + this.port + "/" + database + "?allowPublicKeyRetrieval=true";
	}

	/**
	 * Logs user {@value #USER} in once over TCP with TLS (the MySQL client's default), which
	 * {@code caching_sha2_password} then remembers: until the server restarts, the user's logins over TCP need neither
	 * TLS nor the server's RSA key, which a {@code mariadb} client on the host offers neither of.
	 */
	public void cacheUserPassword() {
		MySqlRootfs.run(this.dir.resolve("mysql.log"), List.of("chroot", this.rootfs.toString(), "/usr/bin/mysql",
				"--no-defaults", "--protocol=TCP", "-h127.0.0.1", "-P" + this.port, "-u" + USER, "-p" + PASSWORD, "-e",
				"SELECT 1"));
	}

	@Override
	public void sqlAsRoot(String statements) {
		MySqlRootfs.run(this.dir.resolve("mysql.log"), List.of("chroot", this.rootfs.toString(), "/usr/bin/mysql",
				"--no-defaults", "-uroot", "--socket=" + rootfsPath(socket()), "-e",
				statements));
	}

	/** The socket's path on this machine; the chrooted server sees it relative to its root file system. */
	@Override
	public Path socket() {
		return this.dir.resolve("mysqld.sock");
	}

	@Override
	protected List<String> command() {
		String inside = rootfsPath(this.dir);
		List<String> command = new ArrayList<>(List.of("chroot", this.rootfs.toString(), "/usr/sbin/mysqld"));
		command.add((this.optionFile != null) ? "--defaults-file=" + inside + "/my.cnf" : "--no-defaults");
		command.addAll(List.of("--datadir=" + inside + "/data", "--socket=" + rootfsPath(socket()),
				"--pid-file=" + inside + "/mysqld.pid", "--port=" + this.port, "--user=root",
				// Private to this machine: loopback only, no DNS lookups, no X protocol port (33060 for every one).
				"--bind-address=127.0.0.1", "--skip-name-resolve", "--mysqlx=OFF", "--secure-file-priv=",
				"--character-set-server=utf8mb4", "--collation-server=utf8mb4_unicode_ci",
				// Throwaway data: durability per commit buys nothing and costs an fsync per commit.
				"--innodb-flush-log-at-trx-commit=2", "--innodb-buffer-pool-size=256M"));
		if (this.optionFile == null) {
			command.addAll(List.of("--log-bin=mysql-bin", "--binlog-format=ROW", "--binlog-row-image=FULL",
					"--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--server-id=1"));
		}
		command.addAll(this.options);
		return command;
	}

	private void writeOptionFile() {
		try {
			Files.writeString(this.dir.resolve("my.cnf"), this.optionFile);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The certificate of the CA that signed the server's TLS certificate: the self-signed pair
	 * {@code mysqld --initialize} made, which clients check the server against ({@code serverSslCert}).
	 */
	public Path certificateAuthority() {
		return this.dir.resolve("data").resolve("ca.pem");
	}

	/** What the server wrote to its error log so far: its warnings about the settings it was given. */
	public String errorLog() {
		return log();
	}

}
