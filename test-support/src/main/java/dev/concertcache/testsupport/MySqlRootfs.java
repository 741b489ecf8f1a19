package dev.concertcache.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Debian sid root file system {@link MySqlServer} runs {@code mysqld} in, made once per machine by
 * {@code scripts/mysql-rootfs.sh}, and an initialized data directory inside it that each new server copies.
 */
final class MySqlRootfs {

	private static final String MARKER = ".concert-cache-ready";

	/** Made by {@code mysqld --initialize-insecure} once per root file system: 10 s a server saved. */
	private static final String INITIALIZED_DATA = "var/lib/concert-cache/mysql-data";

	private MySqlRootfs() {
	}

	/**
	 * The root file system, made first if this machine has none.
	 * @throws IllegalStateException saying what is missing when it is not there and cannot be made
	 */
	static synchronized Path ready() {
		Path rootfs = location();
		if (Files.exists(rootfs.resolve(MARKER))) {
			return rootfs;
		}
		Path script = ServerProcess.repositoryFile("scripts/mysql-rootfs.sh");
		Path log = Path.of(System.getProperty("java.io.tmpdir"), "concert-cache-mysql-rootfs.log");
		try {
			run(log, List.of("bash", script.toString(), rootfs.toString()), 15);
		}
		catch (IllegalStateException ex) {
			throw new IllegalStateException("No MySQL root file system at " + rootfs + " ($CONCERT_CACHE_MYSQL_ROOTFS), "
					+ "and " + script + " could not make one; it needs root, debootstrap and Debian's mirror "
					+ "(sid: mysql-server-core, mysql-client-core). " + ex.getMessage(), ex);
		}
		return rootfs;
	}

	/** Copies the root file system's initialized data directory to {@code target}, initializing it first if needed. */
	static synchronized void copyInitializedData(Path rootfs, Path target) {
		Path initialized = rootfs.resolve(INITIALIZED_DATA);
		if (!Files.isDirectory(initialized)) {
			Path partial = initialized.resolveSibling("mysql-data-" + ProcessHandle.current().pid());
			try {
				Files.createDirectories(partial.getParent());
				run(partial.resolveSibling("initialize.log"), List.of("chroot", rootfs.toString(), "/usr/sbin/mysqld",
						"--no-defaults", "--initialize-insecure", "--user=root",
						"--datadir=/" + rootfs.relativize(partial)), 5);
				// Another JVM may have finished first: its copy is as good.
				Files.move(partial, initialized, StandardCopyOption.ATOMIC_MOVE);
			}
			catch (IOException ex) {
				if (!Files.isDirectory(initialized)) {
					throw new IllegalStateException("Could not initialize " + initialized, ex);
				}
			}
		}
		run(target.resolveSibling("copy.log"), List.of("cp", "-a", initialized.toString(), target.toString()), 5);
		try {
			// Each server its own UUID (written again on start): GTIDs name the server that wrote them.
			Files.deleteIfExists(target.resolve("auto.cnf"));
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static void run(Path log, List<String> command) {
		run(log, command, 2);
	}

	private static void run(Path log, List<String> command, long minutes) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
			if (!process.waitFor(minutes, TimeUnit.MINUTES)) {
				process.destroyForcibly();
				throw new IllegalStateException(String.join(" ", command) + " did not finish in " + minutes
						+ " min: " + Files.readString(log));
			}
			if (process.exitValue() != 0) {
				throw new IllegalStateException(command.get(0) + " " + command.get(command.size() > 2 ? 2 : 1)
						+ " failed: " + Files.readString(log));
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not run " + command.get(0), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static Path location() {
		String configured = System.getenv("CONCERT_CACHE_MYSQL_ROOTFS");
		if (configured != null && !configured.isBlank()) {
			return Path.of(configured);
		}
		String cache = System.getenv("XDG_CACHE_HOME");
		Path base = (cache != null && !cache.isBlank()) ? Path.of(cache) : Path.of(System.getProperty("user.home"), ".cache");
		return base.resolve("concert-cache/mysql-rootfs");
	}

}
