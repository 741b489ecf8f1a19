package dev.concertcache.tiered;

import java.time.Duration;

import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.TieredCache.Source;

/**
 * Up to when an external change feed has invalidated both tiers (ADR 0037): a reader of the database's binary log
 * tombstones and announces each change some time after its commit, so neither tier can be trusted for changes
 * committed since the feed last confirmed it caught up. The feed says, on the invalidation stream, "every change
 * committed more than {@code lag} ago has been invalidated"; the {@link InvalidationListener} turns that into a
 * time on this instance's watermark clock.
 * <p>
 * While that time is at most {@code max-lag} old, both tiers serve as usual. Past it (the feed stalled, behind, or
 * without a reader), a read skips L1 and Redis and calls the loader: only a value the loader itself read within
 * {@code max-lag} is served from L1. Without a feed ({@link #NONE}) nothing is gated.
 */
final class ChangeFeedWatermark {

	/** No change feed: the tiers are trusted as far as the invalidation stream allows. */
	static final ChangeFeedWatermark NONE = new ChangeFeedWatermark(null);

	private final @Nullable InvalidationWatermark confirmed;

	private ChangeFeedWatermark(@Nullable InvalidationWatermark confirmed) {
		this.confirmed = confirmed;
	}

	/** A feed whose confirmations must be at most {@code maxLag} old for the tiers to be trusted. */
	static ChangeFeedWatermark of(Ticker ticker, Duration maxLag) {
		return new ChangeFeedWatermark(new InvalidationWatermark(ticker, maxLag));
	}

	/**
	 * Whether a feed is followed: its checkpoint then tells it what a failed-over stream node lost, and it
	 * invalidates that again, so such a failover need not clear L1 (ADR 0037).
	 */
	boolean isFollowed() {
		return this.confirmed != null;
	}

	/** Every change committed before {@code time} (watermark clock) has been invalidated in both tiers. */
	void confirmedUntil(long time) {
		if (this.confirmed != null) {
			this.confirmed.heardUntil(time);
		}
	}

	/** Whether Redis may be read now: every change older than {@code max-lag} is tombstoned there. */
	boolean coversRedis() {
		return this.confirmed == null || this.confirmed.covers(InvalidationWatermark.NEVER);
	}

	/** Whether {@code entry} may be served from L1 now. */
	boolean covers(L1Entry<?> entry) {
		return this.confirmed == null || this.confirmed.covers(InvalidationWatermark.NEVER)
				|| (entry.lookup.source() == Source.LOADER && this.confirmed.covers(entry.readAt));
	}

	/** How long ago the feed last confirmed, or {@code null} if it never has or there is none. */
	@Nullable Duration silence() {
		return (this.confirmed != null) ? this.confirmed.silence() : null;
	}

}
