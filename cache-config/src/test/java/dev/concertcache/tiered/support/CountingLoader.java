package dev.concertcache.tiered.support;

import java.sql.SQLNonTransientConnectionException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.springframework.jdbc.CannotGetJdbcConnectionException;

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

	/** A loader whose database refuses connections, as HikariCP reports it once MariaDB is gone. */
	Supplier<Optional<Item>> unreachable() {
		return failingWith(() -> new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection",
				new SQLNonTransientConnectionException("Socket fail to connect")));
	}

	int calls() {
		return this.calls.get();
	}

}
