package dev.concertcache.tiered;

/**
 * The result of {@link RedisTier#getOrLock}: the fresh value ({@link Hit}), or what the key held ({@code ""} for nothing,
 * a tombstone or a stale value) with the lock taken ({@link Locked}) or held by another loader ({@link Wait}); each
 * with the Redis server's time (epoch ms) when the step ran.
 */
sealed interface LockAttempt {

	String raw();

	long serverTime();

	static LockAttempt of(String outcome, String raw, long serverTime) {
		return switch (outcome) {
			case "hit" -> new Hit(raw, serverTime);
			case "locked" -> new Locked(raw, serverTime);
			default -> new Wait(raw, serverTime);
		};
	}

	record Hit(String raw, long serverTime) implements LockAttempt {
	}

	record Locked(String raw, long serverTime) implements LockAttempt {
	}

	record Wait(String raw, long serverTime) implements LockAttempt {
	}

}
