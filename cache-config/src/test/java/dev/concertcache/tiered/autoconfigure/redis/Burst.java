package dev.concertcache.tiered.autoconfigure.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Runs an operation from many threads at once: every thread waits at a start gate, then runs its share of
 * operations back to back. Counts successes, failures by root cause, and the slowest operation.
 */
final class Burst {

	private final AtomicInteger successes = new AtomicInteger();

	private final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();

	private final ConcurrentLinkedQueue<Object> results = new ConcurrentLinkedQueue<>();

	private final AtomicLong slowestNanos = new AtomicLong();

	private long elapsedNanos;

	private Burst() {
	}

	static Burst run(int threads, int operationsPerThread, Supplier<?> operation) throws InterruptedException {
		Burst burst = new Burst();
		CountDownLatch ready = new CountDownLatch(threads);
		CountDownLatch start = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(threads);
		List<Thread> workers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			Thread worker = new Thread(() -> {
				ready.countDown();
				try {
					start.await();
					for (int i = 0; i < operationsPerThread; i++) {
						burst.timed(operation);
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				finally {
					done.countDown();
				}
			}, "burst-" + t);
			worker.setDaemon(true);
			workers.add(worker);
			worker.start();
		}
		ready.await();
		long begin = System.nanoTime();
		start.countDown();
		if (!done.await(2, TimeUnit.MINUTES)) {
			workers.forEach(Thread::interrupt);
			throw new IllegalStateException("Burst did not finish within 2 minutes");
		}
		burst.elapsedNanos = System.nanoTime() - begin;
		return burst;
	}

	private void timed(Supplier<?> operation) {
		long begin = System.nanoTime();
		try {
			Object result = operation.get();
			this.successes.incrementAndGet();
			if (result != null) {
				this.results.add(result);
			}
		}
		catch (Throwable ex) {
			this.failures.add(ex);
		}
		finally {
			long took = System.nanoTime() - begin;
			this.slowestNanos.accumulateAndGet(took, Math::max);
		}
	}

	int successes() {
		return this.successes.get();
	}

	List<Throwable> failures() {
		return List.copyOf(this.failures);
	}

	List<Object> results() {
		return List.copyOf(this.results);
	}

	long slowestMillis() {
		return TimeUnit.NANOSECONDS.toMillis(this.slowestNanos.get());
	}

	long elapsedMillis() {
		return TimeUnit.NANOSECONDS.toMillis(this.elapsedNanos);
	}

	/** Failures counted by the message of their root cause, numbers (ports, durations) masked. */
	Map<String, Integer> failuresByRootCause() {
		Map<String, Integer> counts = new TreeMap<>();
		for (Throwable failure : this.failures) {
			Throwable root = rootCause(failure);
			String message = String.valueOf(root.getMessage()).replaceAll("[0-9]+", "#");
			counts.merge(root.getClass().getSimpleName() + ": " + message, 1, Integer::sum);
		}
		return counts;
	}

	long failuresWithRootCauseContaining(String text) {
		return this.failures.stream()
			.filter((failure) -> String.valueOf(rootCause(failure).getMessage()).contains(text))
			.count();
	}

	String summary() {
		return this.successes.get() + " ok, " + this.failures.size() + " failed " + failuresByRootCause()
				+ ", slowest " + slowestMillis() + " ms, burst took " + elapsedMillis() + " ms";
	}

	static Throwable rootCause(Throwable failure) {
		Throwable root = failure;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return root;
	}

}
