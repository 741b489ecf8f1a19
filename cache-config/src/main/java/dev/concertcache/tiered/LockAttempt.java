package dev.concertcache.tiered;

/**
 * The result of {@link RedisTier#getOrLock}: the fresh value ({@link Hit}), or what the key held ({@code ""} for nothing,
 * a tombstone or a stale value) with the lock taken ({@link Locked}) or held by another loader ({@link Wait}).
 */
sealed interface LockAttempt {

	String raw();

	static LockAttempt of(String outcome, String raw) {
		return switch (outcome) {
			case "hit" -> new Hit(raw);
			case "locked" -> new Locked(raw);
			default -> new Wait(raw);
		};
	}

	record Hit(String raw) implements LockAttempt {
	}

	record Locked(String raw) implements LockAttempt {
	}

	record Wait(String raw) implements LockAttempt {
	}

}
