package dev.concertcache.tiered.loader;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * Whether the database behind the loaders of one manager's caches can be reached, shared by their
 * {@link LoaderGuard}s (ADR 0030): after a load of any cache, or anything else that talks to that database (the
 * binary-log reader), found it out of reach, one load at a time tries it until one succeeds, and the other loads are
 * rejected at once. One cache finding the database gone thus spares every other cache its own wait for the pool's
 * connection timeout, and one load reaching it again tells every cache's guard at once.
 */
public final class LoaderReachability {

	/** The last failure that found the database out of reach, {@code null} once a load succeeded since. */
	private volatile @Nullable RuntimeException lastUnreachable;

	/** Whether a load is trying a database found out of reach. */
	private final AtomicBoolean probing = new AtomicBoolean();

	/** What runs when a load reaches the database after it was found out of reach. */
	private final List<Runnable> reachableAgain = new CopyOnWriteArrayList<>();

	/**
	 * Something other than a load failed to reach the database: if {@code failure} says it is out of reach
	 * ({@link LoaderFailures#isUnreachable}), loads try it one at a time from now on, as after a load that failed so.
	 * A successful load ends that.
	 */
	public void connectionFailed(Exception failure) {
		if (LoaderFailures.isUnreachable(failure)) {
			this.lastUnreachable = (failure instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(failure.getMessage(), failure);
		}
	}

	/** The last failure that found the database out of reach, or {@code null} if a load has succeeded since. */
	public @Nullable RuntimeException lastUnreachable() {
		return this.lastUnreachable;
	}

	/** A load's outcome: reachable after a success ({@code null}), else as {@code failure} says. */
	void loadEnded(@Nullable RuntimeException failure) {
		boolean wasUnreachable = this.lastUnreachable != null;
		this.lastUnreachable = (failure != null && LoaderFailures.isUnreachable(failure)) ? failure : null;
		if (wasUnreachable && failure == null) {
			this.reachableAgain.forEach(Runnable::run);
		}
	}

	/** Runs {@code action} each time a load reaches the database after it was found out of reach. */
	void whenReachableAgain(Runnable action) {
		this.reachableAgain.add(action);
	}

	/** Takes the one trial load's turn; {@code false} if another load has it. */
	boolean startTrial() {
		return this.probing.compareAndSet(false, true);
	}

	void endTrial() {
		this.probing.set(false);
	}

}
