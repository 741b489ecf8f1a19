package dev.concertcache.tiered;

/**
 * A JIT warm-up that leaves the caches cold: while a thread is inside {@link #enter()}, every read of every cache
 * of the manager goes to a throwaway twin of that cache (its own L1, its own Redis keys under
 * {@code <key-prefix>:warmup:<instance-id>:}, meters that are not published), through the same code as a real
 * read, the loader included. {@link #close()} drops the twins and deletes their Redis keys. An application
 * warms its request paths with real traffic this way before it reports ready, and its first real request
 * still finds the caches as cold as the other instances left them (ADR 0202).
 */
public interface TieredCacheWarmup extends AutoCloseable {

	/** A warm-up that isolates nothing, for managers that cache nothing. */
	TieredCacheWarmup NONE = new TieredCacheWarmup() {

		@Override
		public Scope enter() {
			return () -> {
			};
		}

		@Override
		public void cool(boolean redisToo) {
		}

		@Override
		public void close() {
		}

	};

	/**
	 * Routes this thread's cache reads and evictions to the twins until the returned scope is closed.
	 */
	Scope enter();

	/**
	 * Makes the twins cold again: their L1 only, so that the next reads are Redis hits, or with {@code redisToo}
	 * their Redis keys as well, so that the next reads are loads. A cold instance keeps taking those paths in its
	 * first minutes; a warm-up whose twins stayed warm would leave them to be compiled on real traffic (ADR 0202).
	 */
	void cool(boolean redisToo);

	/** Ends the warm-up: drops the twins and deletes what they stored in Redis. */
	@Override
	void close();

	/** A thread's stay inside the warm-up. */
	interface Scope extends AutoCloseable {

		@Override
		void close();

	}

}
