package dev.concertcache.testsupport;

import java.util.Properties;

/**
 * Reads {@code INFO replication} of a primary and its replica, for tests that must know a write reached the
 * replica (or, after cutting it off, that one did not).
 */
public final class Replication {

	private Replication() {
	}

	/**
	 * Whether the replica has applied everything its primary wrote so far.
	 * @param primaryInfo the primary's {@code INFO replication}
	 * @param replicaInfo the replica's {@code INFO replication}
	 */
	public static boolean caughtUp(String primaryInfo, String replicaInfo) {
		return offset(replicaInfo, "slave_repl_offset") >= offset(primaryInfo, "master_repl_offset");
	}

	private static long offset(String info, String name) {
		Properties properties = new Properties();
		info.lines().filter((line) -> line.contains(":")).forEach((line) -> {
			int colon = line.indexOf(':');
			properties.setProperty(line.substring(0, colon), line.substring(colon + 1).trim());
		});
		return Long.parseLong(properties.getProperty(name, "-1"));
	}

}
