package dev.concertcache.tiered.support;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What one test starts, ended after it: the threads of its concurrent steps are interrupted, then what it asked to
 * close (cache instances, servers) is closed, the last started first. Registered on a test instance's field with
 * {@code @RegisterExtension}.
 */
final class TestScope implements AfterEachCallback {

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	/** Closes {@code closeable} after the test; returns it. */
	<T extends AutoCloseable> T closeAfter(T closeable) {
		this.closeables.add(closeable);
		return closeable;
	}

	/** Runs {@code step} on a thread of its own, interrupted after the test if still running. */
	<T> Future<T> submit(Callable<T> step) {
		return this.threads.submit(step);
	}

	/** Runs {@code step} on a thread of its own, interrupted after the test if still running. */
	Future<?> submit(Runnable step) {
		return this.threads.submit(step);
	}

	@Override
	public void afterEach(ExtensionContext context) throws Exception {
		this.threads.shutdownNow();
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

}
