package dev.concertcache.tiered.gate;

import java.time.Duration;

import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

/**
 * Up to when this instance has heard every invalidation, and so how far its L1 can be trusted (ADR 0039, "The
 * gate"): an instance that cannot hear the stream serves nothing from L1 older than {@code max-silence}.
 */
public final class InvalidationWatermark {

	/** A time that is never covered. */
	public static final long NEVER = Long.MIN_VALUE;

	private final Ticker ticker;

	private final long maxSilenceNanos;

	private volatile long heardUntil = NEVER;

	/** When the listener last started reading from the stream's end: nothing published before was read. */
	private volatile long listeningFrom = NEVER;

	public InvalidationWatermark(Ticker ticker, Duration maxSilence) {
		this.ticker = ticker;
		this.maxSilenceNanos = maxSilence.toNanos();
	}

	public long now() {
		return this.ticker.read();
	}

	public Duration maxSilence() {
		return Duration.ofNanos(this.maxSilenceNanos);
	}

	/** Every invalidation published before {@code sentAt} (a read of the stream sent then) has been applied. */
	public void heardUntil(long sentAt) {
		if (this.heardUntil == NEVER || sentAt - this.heardUntil > 0) {
			this.heardUntil = sentAt;
		}
	}

	/**
	 * The listener starts reading after the stream's last message as of now: an invalidation published before was
	 * not read, so what was heard after vouches only for values read from now on.
	 */
	public void listeningFrom(long startedAt) {
		this.listeningFrom = startedAt;
	}

	/**
	 * Whether a value read at {@code readAt} may be served from L1 now: everything was heard recently and the value
	 * was read after the listener started, or the value itself is recent.
	 */
	public boolean covers(long readAt) {
		long now = this.ticker.read();
		long heard = this.heardUntil;
		long from = this.listeningFrom;
		boolean heardSinceRead = heard != NEVER && now - heard <= this.maxSilenceNanos
				&& (readAt == NEVER || (from != NEVER && readAt - from >= 0));
		return heardSinceRead || (readAt != NEVER && now - readAt <= this.maxSilenceNanos);
	}

	/** How long ago everything was last heard, or {@code null} if never. */
	public @Nullable Duration silence() {
		long heard = this.heardUntil;
		return (heard != NEVER) ? Duration.ofNanos(this.ticker.read() - heard) : null;
	}

}
