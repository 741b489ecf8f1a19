package dev.concertcache.tiered.redis;

/**
 * The result of {@link RedisTier#getOrLock}: the fresh value ({@link Hit}), or what the key held ({@code ""} for nothing,
 * a tombstone or a stale value) with the lock taken ({@link Locked}) or held by another loader ({@link Wait}); each
 * with the Redis server's time (epoch ms) when the step ran.
 */
public sealed interface LockAttempt {

	public String raw();

	public long serverTime();

	public static LockAttempt of(String outcome, String raw, long serverTime) {
		return switch (outcome) {
			case "hit" -> new Hit(raw, serverTime);
			case "locked" -> new Locked(raw, serverTime);
			default -> new Wait(raw, serverTime);
		};
	}

	public record Hit(String raw, long serverTime) implements LockAttempt {
	}

	public record Locked(String raw, long serverTime) implements LockAttempt {
	}

	public record Wait(String raw, long serverTime) implements LockAttempt {
	}

}
