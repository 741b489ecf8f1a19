package dev.concertcache.api.capture;

import java.time.Duration;

/**
 * Waits between attempts that fail in a row: the initial wait after the first failure, doubled after each
 * further one, up to the maximum. Not thread-safe.
 */
final class Backoff {

	private final Duration initial;

	private final Duration max;

	private Duration next;

	Backoff(Duration initial, Duration max) {
		this.initial = initial;
		this.max = (max.compareTo(initial) >= 0) ? max : initial;
		this.next = initial;
	}

	/** An attempt failed: the wait before the next one. */
	Duration failed() {
		Duration wait = this.next;
		Duration doubled = this.next.multipliedBy(2);
		this.next = (doubled.compareTo(this.max) <= 0) ? doubled : this.max;
		return wait;
	}

	/** An attempt succeeded: the next failure waits the initial wait again. */
	void reset() {
		this.next = this.initial;
	}

}
