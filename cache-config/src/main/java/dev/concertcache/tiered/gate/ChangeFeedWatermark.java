package dev.concertcache.tiered.gate;

import java.time.Duration;

import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;


/**
 * Up to when an external change feed has invalidated both tiers (ADR 0037): a reader of the database's binary log
 * tombstones and announces each change some time after its commit, so neither tier can be trusted for changes
 * committed since the feed last confirmed it caught up. The feed says, on the invalidation stream, "every change
 * committed more than {@code lag} ago has been invalidated"; the {@code InvalidationListener} turns that into a
 * time on this instance's watermark clock.
 * <p>
 * While that time is at most {@code max-lag} old, both tiers serve as usual. Past it (the feed stalled, behind, or
 * without a reader), a read skips L1 and Redis and calls the loader: only a value the loader itself read within
 * {@code max-lag} is served from L1. Without a feed followed ({@link #notFollowed()}) nothing is gated.
 */
public final class ChangeFeedWatermark {

	private final @Nullable InvalidationWatermark confirmed;

	private final ChangeFeedPosition position = new ChangeFeedPosition();

	private ChangeFeedWatermark(@Nullable InvalidationWatermark confirmed) {
		this.confirmed = confirmed;
	}

	/**
	 * No feed the tiers go by: they are trusted as far as the invalidation stream allows. A feed's confirmations
	 * still tell which position was heard, for causal reads.
	 */
	public static ChangeFeedWatermark notFollowed() {
		return new ChangeFeedWatermark(null);
	}

	/** A feed whose confirmations must be at most {@code maxLag} old for the tiers to be trusted. */
	public static ChangeFeedWatermark of(Ticker ticker, Duration maxLag) {
		return new ChangeFeedWatermark(new InvalidationWatermark(ticker, maxLag));
	}

	/**
	 * Whether a feed is followed: its checkpoint then tells it what a failed-over stream node lost, and it
	 * invalidates that again, so such a failover need not clear L1 (ADR 0037).
	 */
	public boolean isFollowed() {
		return this.confirmed != null;
	}

	/** Every change committed before {@code time} (watermark clock) has been invalidated in both tiers. */
	public void confirmedUntil(long time) {
		if (this.confirmed != null) {
			this.confirmed.heardUntil(time);
		}
	}

	/** Whether Redis may be read now: every change older than {@code max-lag} is tombstoned there. */
	public boolean coversRedis() {
		return this.confirmed == null || this.confirmed.covers(InvalidationWatermark.NEVER);
	}

	/**
	 * Whether a value read from the database at {@code databaseReadAt} (watermark clock,
	 * {@link InvalidationWatermark#NEVER} if unknown) may be served from L1 now: the feed confirmed recently, or the
	 * value was read within {@code max-lag}.
	 */
	public boolean covers(long databaseReadAt) {
		return this.confirmed == null || this.confirmed.covers(InvalidationWatermark.NEVER)
				|| (databaseReadAt != InvalidationWatermark.NEVER && this.confirmed.covers(databaseReadAt));
	}

	/**
	 * How old a value's database read may be for either tier to serve it while the feed is behind ({@code max-lag});
	 * zero without a feed followed.
	 */
	public Duration maxLag() {
		return (this.confirmed != null) ? this.confirmed.maxSilence() : Duration.ZERO;
	}

	/** The newest position the feed confirmed that this instance has heard. */
	public ChangeFeedPosition position() {
		return this.position;
	}

	/** How long ago the feed last confirmed, or {@code null} if it never has or there is none. */
	public @Nullable Duration silence() {
		return (this.confirmed != null) ? this.confirmed.silence() : null;
	}

}
