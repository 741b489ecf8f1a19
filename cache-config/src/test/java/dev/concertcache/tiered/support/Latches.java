package dev.concertcache.tiered.support;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Latch helpers for loaders that block until a test releases them.
 */
final class Latches {

	private Latches() {
	}

	/** Waits for {@code latch}, at most 10 s (a failing test must not hang the build). */
	static void awaitRelease(CountDownLatch latch) {
		try {
			if (!latch.await(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Latch not released");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Waits for {@code latch} as long as it takes: a thread a test parks until its {@code finally} releases it. */
	static void park(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
