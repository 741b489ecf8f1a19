package dev.concertcache.tiered.local;

import java.util.Optional;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * What {@link LocalTier} asks of the cache for a key that had no fresh value in L1: Redis, then the loader, and what
 * to serve instead while the loader cannot be reached.
 *
 * @param <V> the value type
 */
public interface Loads<V> {

	L1Entry<V> load(String key, Supplier<Optional<V>> loader, @Nullable L1Entry<V> staleInL1);

	/** {@link #load} for refresh-ahead: {@code current} is still fresh; Redis' answer is counted apart. */
	L1Entry<V> refresh(String key, Supplier<Optional<V>> loader, L1Entry<V> current);

	/**
	 * What a reader serves instead of waiting for another's reload of {@code previous} while the loader cannot
	 * be reached (the reload will most likely fail): {@code previous} marked stale; {@code null} to wait.
	 */
	@Nullable L1Entry<V> whileUnreachable(String key, L1Entry<V> previous);

	/**
	 * {@link #whileUnreachable} for an entry served stale within the loader's retry interval: a load would fail
	 * at once and read Redis again; past the interval {@code null}, and the reader tries the loader.
	 */
	@Nullable L1Entry<V> againWhileUnreachable(String key, L1Entry<V> servedStale);

}
