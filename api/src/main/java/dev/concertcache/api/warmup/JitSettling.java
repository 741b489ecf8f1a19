package dev.concertcache.api.warmup;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * Waits until the JIT compiler has settled: over the last {@value #WINDOW_SECONDS} seconds it spent less than
 * {@code quiet} per second compiling ({@link CompilationMXBean}, summed over compiler threads). At least one full
 * window always passes, since the interpreter hands the JIT its first work within seconds.
 */
final class JitSettling {

	private static final int WINDOW_SECONDS = 5;

	private final CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();

	private final long quietMillis;

	JitSettling(Duration quiet) {
		this.quietMillis = quiet.toMillis() * WINDOW_SECONDS;
	}

	/** True when the JIT settled before {@code deadline} (nano time), false at the deadline. */
	boolean await(long deadline) throws InterruptedException {
		boolean measurable = this.compiler != null && this.compiler.isCompilationTimeMonitoringSupported();
		long[] window = new long[WINDOW_SECONDS + 1];
		for (int second = 0; System.nanoTime() < deadline; second++) {
			window[second % window.length] = measurable ? this.compiler.getTotalCompilationTime() : 0;
			if (measurable && second >= WINDOW_SECONDS
					&& window[second % window.length] - window[(second + 1) % window.length] < this.quietMillis) {
				return true;
			}
			Thread.sleep(Math.max(0, Math.min(1000, (deadline - System.nanoTime()) / 1_000_000)));
		}
		return false;
	}

}
