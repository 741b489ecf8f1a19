package dev.concertcache.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A private {@code mariadbd} with its own data directory, on a free loopback port, with database
 * {@value #DATABASE} and user {@value #USER}/{@value #PASSWORD}, configured by the repository's
 * {@code ops/mariadb/binlog.cnf} and {@code ops/mariadb/test.cnf}. The load runner's ({@code scripts/services.sh})
 * is one too, started by the {@link Launcher}.
 */
public final class MariaDbServer extends ServerProcess implements DatabaseServer {

	private static final String GLOBAL_PRIVILEGES = "PROCESS, REPLICATION CLIENT, REPLICATION SLAVE, BINLOG MONITOR, "
			+ "BINLOG ADMIN, RELOAD";

	private static MariaDbServer shared;

	private final List<String> options;

	private boolean installed;

	/**
	 * A server started with {@code options} after the defaults, which they override (the last of an option wins):
	 * {@code --skip-log-bin}, {@code --binlog-format=STATEMENT}.
	 */
	public MariaDbServer(String... options) {
		super("mariadb");
		this.options = List.of(options);
	}

	/** One server for the whole test JVM; each test class cleans the tables it uses. */
	public static synchronized MariaDbServer shared() {
		if (shared == null) {
			shared = new MariaDbServer();
		}
		shared.start();
		return shared;
	}

	@Override
	public synchronized void start() {
		if (!this.installed) {
			run(List.of(executable("/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db"), "--no-defaults",
					"--datadir=" + this.dir.resolve("data"), "--user=" + System.getProperty("user.name"),
					"--auth-root-authentication-method=normal", "--skip-test-db"));
			this.installed = true;
			super.start();
			// The tests read global status counters (Com_select) and EXPLAIN plans; change data capture reads the
			// binary log (ADR 0033), and its tests purge it.
			sql(DatabaseServer.databaseAndUser(GLOBAL_PRIVILEGES));
			return;
		}
		super.start();
	}

	@Override
	public Flavor flavor() {
		return Flavor.MARIADB;
	}

	@Override
	public void sqlAsRoot(String statements) {
		sql(statements);
	}

	@Override
	public String jdbcUrl(String database) {
		return "jdbc:mariadb://127.0.0.1:" + this.port + "/" + database;
	}

	@Override
	public Path socket() {
		return this.dir.resolve("mysqld.sock");
	}

	@Override
	protected List<String> command() {
		List<String> command = new ArrayList<>(List.of(executable("/usr/sbin/mariadbd", "/usr/sbin/mysqld"),
				"--defaults-file=" + defaultsFile(), "--datadir=" + this.dir.resolve("data"),
				"--socket=" + socket(), "--pid-file=" + this.dir.resolve("mysqld.pid"),
				"--port=" + this.port, "--user=" + System.getProperty("user.name")));
		command.addAll(this.options);
		return command;
	}

	/**
	 * The repository's server settings: {@code ops/mariadb/binlog.cnf}
	 * (what change data capture needs, ADR 0033) then {@code ops/mariadb/test.cnf} (a throwaway server's). A
	 * file of includes, because {@code !include} takes absolute paths only; nothing from {@code /etc/mysql}.
	 */
	private Path defaultsFile() {
		Path file = this.dir.resolve("my.cnf");
		try {
			Files.writeString(file, "!include " + repositoryFile("ops/mariadb/binlog.cnf") + "\n!include "
					+ repositoryFile("ops/mariadb/test.cnf") + "\n");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return file;
	}

	private void sql(String statements) {
		run(List.of(executable("/usr/bin/mariadb", "/usr/bin/mysql"), "--no-defaults", "-uroot",
				"--socket=" + socket(), "-e", statements));
	}

	private void run(List<String> command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(this.dir.resolve(Path.of(command.get(0)).getFileName() + ".log").toFile())
				.start();
			if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
				process.destroyForcibly();
				throw new IllegalStateException(String.join(" ", command.subList(0, 1)) + " failed: "
						+ Files.readString(
								this.dir.resolve(Path.of(command.get(0)).getFileName() + ".log")));
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not run " + command.get(0)
					+ " (install it: apt-get install mariadb-server)", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
