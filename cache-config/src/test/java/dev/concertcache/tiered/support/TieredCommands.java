package dev.concertcache.tiered.support;

import java.util.function.Predicate;

import dev.concertcache.testsupport.CommandTrap.Sent;

/** The commands of an instance's own threads that tests park them before (see {@code CommandTrap}). */
final class TieredCommands {

	private TieredCommands() {
	}

	/** An announcement on the invalidation stream of the instances under {@code keyPrefix} (a script). */
	static Predicate<Sent> announcement(String keyPrefix) {
		return Sent.script().and(Sent.naming(keyPrefix + ":invalidations"));
	}

	/** The first step of a failover's generation moves, on the thread that makes them. */
	static Predicate<Sent> failoverMove() {
		return Sent.onThread("tiered-cache-failover");
	}

	/** The invalidation listener asking which server its connection is on ({@code run_id}). */
	static Predicate<Sent> listenersServerCheck() {
		return Sent.named("INFO").and(Sent.naming("server")).and(Sent.onThread("tiered-cache-invalidations"));
	}

}
