package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A loader (the "database") that counts its calls.
 */
final class CountingLoader {

	private final AtomicInteger calls = new AtomicInteger();

	Supplier<Optional<Item>> returning(Item item) {
		return () -> {
			this.calls.incrementAndGet();
			return Optional.ofNullable(item);
		};
	}

	Supplier<Optional<Item>> absent() {
		return returning(null);
	}

	/** A loader that fails, each call with a new {@code failure}, as a database that cannot be reached does. */
	Supplier<Optional<Item>> failingWith(Supplier<? extends RuntimeException> failure) {
		return () -> {
			this.calls.incrementAndGet();
			throw failure.get();
		};
	}

	int calls() {
		return this.calls.get();
	}

}
