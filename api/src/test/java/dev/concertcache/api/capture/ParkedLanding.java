package dev.concertcache.api.capture;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The capture's landing thread parked before each landing until closed: the reader reads changes but lands none,
 * so it confirms nothing past them (a stalled landing, a reader far behind).
 */
final class ParkedLanding implements AutoCloseable {

	private final BinlogCapture capture;

	private final CountDownLatch release = new CountDownLatch(1);

	private ParkedLanding(BinlogCapture capture) {
		this.capture = capture;
		capture.beforeLanding(this::awaitRelease);
	}

	static ParkedLanding of(BinlogCapture capture) {
		return new ParkedLanding(capture);
	}

	private void awaitRelease() {
		try {
			this.release.await(1, TimeUnit.MINUTES);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		this.capture.beforeLanding(() -> {
		});
		this.release.countDown();
	}

}
