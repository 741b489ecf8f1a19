package dev.concertcache.tiered.loader;

import java.time.Duration;

/**
 * A miss that needed the loader failed without calling it: the loader's circuit breaker is open (the loader
 * failed recently), every bulkhead slot stayed taken for the configured wait, or the last load could not reach the
 * loader and another is trying it. Nothing stale could be served instead. Answer it like an unavailable database:
 * 503 with {@code Retry-After: }{@link #getRetryAfter()}.
 */
public class LoadRejectedException extends RuntimeException {

	private final Reason reason;

	private final Duration retryAfter;

	public LoadRejectedException(Reason reason, Duration retryAfter, Throwable cause) {
		super("Load rejected (" + reason.tag() + "): " + reason.description, cause, false, false);
		this.reason = reason;
		this.retryAfter = retryAfter;
	}

	/** Why the loader was not called. */
	public Reason getReason() {
		return this.reason;
	}

	/** When a retry has a chance: the time the breaker stays open, or a short time for a full bulkhead. */
	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	/** Why a load was rejected. */
	public enum Reason {

		/** The loader's circuit breaker is open: recent loads failed as unavailable. */
		CIRCUIT_OPEN("the loader failed recently"),

		/** Every bulkhead slot stayed taken for the configured wait. */
		BULKHEAD_FULL("too many loads in progress"),

		/** The last load could not reach the loader, and another load is trying it again. */
		UNREACHABLE("the loader could not be reached, another load is trying it");

		private final String description;

		Reason(String description) {
			this.description = description;
		}

		/** The form used in metric tags: {@code circuit-open}, {@code bulkhead-full}, {@code unreachable}. */
		public String tag() {
			return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
		}

	}

}
