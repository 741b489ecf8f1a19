package dev.concertcache.api.capture;

import java.util.concurrent.ThreadFactory;

/** The capture's threads: daemons, so that none of them keeps the JVM running. */
final class DaemonThreads {

	private DaemonThreads() {
	}

	/** Makes daemon threads named {@code name}. */
	static ThreadFactory named(String name) {
		return (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		};
	}

}
