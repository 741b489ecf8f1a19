package dev.concertcache.tiered.gate;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

/**
 * The one place that decides what this instance may serve from its tiers now (ADR 0039, "The gate"), from inputs
 * each moved by whoever learns it: the stream heard, disconnects, the change feed's confirmations, the server
 * confirmed, pending evictions. Times are on this instance's ticker: no instance's clock is compared with another's.
 */
public final class FreshnessGate {

	private final InvalidationWatermark heard;

	/** {@code null} when no change feed is followed: the tiers are then trusted as far as the stream allows. */
	private final @Nullable InvalidationWatermark feedConfirmed;

	/** Private, so that no caller can hold it and stall the listener that moves {@link #feedHeard(String)}. */
	private final Object feedLock = new Object();

	/**
	 * The newest position of the change feed (the database's binary log) heard confirmed, in the feed's own
	 * notation: whoever waits says what covers what. Guarded by {@link #feedLock}.
	 */
	private @Nullable String feedPosition;

	private final ServerConfirmation server = new ServerConfirmation();

	private final PendingEvictions pending;

	private final long disconnectMaxAgeNanos;

	private final AtomicLong disconnects = new AtomicLong();

	/** The disconnects that a read of the stream sent after them has answered for. */
	private final AtomicLong readAfter = new AtomicLong();

	/**
	 * @param maxSilence how long the stream may go unheard before L1 serves only what it read since
	 * @param disconnectMaxAge how long after its read an L1 entry is served from a Redis connection's disconnect until
	 * a read of the stream sent after it comes back
	 * @param feedMaxLag how old the change feed's last confirmation may be for the tiers to be trusted, {@code null}
	 * when no feed is followed
	 * @param pendingMaximumSize pending evictions kept at most, past which every cache is evicted whole
	 */
	public FreshnessGate(Ticker ticker, Duration maxSilence, Duration disconnectMaxAge, @Nullable Duration feedMaxLag,
			int pendingMaximumSize) {
		this.disconnectMaxAgeNanos = disconnectMaxAge.toNanos();
		this.heard = new InvalidationWatermark(ticker, maxSilence);
		this.feedConfirmed = (feedMaxLag != null) ? new InvalidationWatermark(ticker, feedMaxLag) : null;
		this.pending = new PendingEvictions(pendingMaximumSize);
	}

	/** Now, on the gate's ticker: what {@code readAt} times are taken with. */
	public long now() {
		return this.heard.now();
	}

	/** Up to when the invalidation stream has been heard; the listener moves it. */
	public InvalidationWatermark heard() {
		return this.heard;
	}

	/**
	 * A Redis connection dropped: the stream's node may be gone, which nothing else tells for a while (a blocked read
	 * waits out its timeout).
	 */
	public void disconnected() {
		this.disconnects.incrementAndGet();
	}

	/** The disconnects so far: a read of the stream sent after this call answers for them. */
	public long disconnects() {
		return this.disconnects.get();
	}

	/** A read of the stream sent after the first {@code disconnects} disconnects came back. */
	public void readAfter(long disconnects) {
		this.readAfter.accumulateAndGet(disconnects, Math::max);
	}

	/** Whether a disconnect has not been answered for by a read of the stream sent after it. */
	public boolean isDisconnected() {
		return this.readAfter.get() < this.disconnects.get();
	}

	public ServerConfirmation server() {
		return this.server;
	}

	public PendingEvictions pending() {
		return this.pending;
	}

	/**
	 * Whether a change feed is followed: its checkpoint then tells it what a failed-over stream node lost, and it
	 * invalidates that again, so such a failover need not clear L1.
	 */
	public boolean followsFeed() {
		return this.feedConfirmed != null;
	}

	/** The feed confirmed that every change committed before {@code time} (ticker) is invalidated in both tiers. */
	public void feedConfirmedUntil(long time) {
		if (this.feedConfirmed != null) {
			this.feedConfirmed.heardUntil(time);
		}
	}

	/**
	 * The feed confirmed {@code position}, read in order after every invalidation before it: both tiers of this
	 * instance reflect the changes up to it (ADR 0038).
	 */
	public void feedHeard(String position) {
		synchronized (this.feedLock) {
			this.feedPosition = position;
			this.feedLock.notifyAll();
		}
	}

	/**
	 * Waits until a position the feed confirmed satisfies {@code covers}, at most {@code timeout}: a causal read of
	 * a write a client made elsewhere (ADR 0038).
	 * @return whether one did
	 */
	public boolean awaitFeed(Predicate<String> covers, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this.feedLock) {
			while (this.feedPosition == null || !covers.test(this.feedPosition)) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				TimeUnit.NANOSECONDS.timedWait(this.feedLock, left);
			}
			return true;
		}
	}

	/**
	 * Whether an L1 entry of {@code key} of {@code cache} may be served: read at {@code readAt}, from the database at
	 * {@code databaseReadAt} ({@link InvalidationWatermark#NEVER} if unknown), with no eviction of the key pending (a
	 * later write of it may not be announced until that one lands, so each read goes to the loader). A whole cache's
	 * pending eviction does not count: every read of the cache would.
	 */
	public boolean servesFromL1(String cache, String key, long readAt, long databaseReadAt) {
		boolean heard = isDisconnected()
				? readAt != InvalidationWatermark.NEVER && now() - readAt <= this.disconnectMaxAgeNanos
				: this.heard.covers(readAt);
		return heard && feedCovers(databaseReadAt) && !this.pending.coversKey(cache, key);
	}

	/** Whether Redis may be read as usual: every change older than {@code max-lag} is tombstoned there. */
	public boolean trustsRedis() {
		return this.feedConfirmed == null || this.feedConfirmed.covers(InvalidationWatermark.NEVER);
	}

	/** How old a value's database read may be for either tier to serve it while the feed is behind; zero without. */
	public Duration feedMaxLag() {
		return (this.feedConfirmed != null) ? this.feedConfirmed.maxSilence() : Duration.ZERO;
	}

	/**
	 * A stamp for a read of {@code key} of {@code cache} in Redis that starts now, {@code -1} if it must not be read:
	 * an eviction of it is pending (Redis still holds what this instance's own write replaced), or a connection
	 * dropped and may be back on a promoted replica that lacks the last tombstones. See {@link #redisHolds}.
	 */
	public long redisStamp(String cache, String key) {
		return this.pending.covers(cache, key) ? -1 : this.server.stamp();
	}

	/** Whether no connection dropped since {@code stamp} was taken, so that what the read found can be used. */
	public boolean redisHolds(long stamp) {
		return this.server.holds(stamp);
	}

	/** How long ago the stream was last heard, or {@code null} if never. */
	public @Nullable Duration silence() {
		return this.heard.silence();
	}

	/** How long ago the feed last confirmed, or {@code null} if it never has or none is followed. */
	public @Nullable Duration feedSilence() {
		return (this.feedConfirmed != null) ? this.feedConfirmed.silence() : null;
	}

	private boolean feedCovers(long databaseReadAt) {
		return this.feedConfirmed == null || this.feedConfirmed.covers(InvalidationWatermark.NEVER)
				|| (databaseReadAt != InvalidationWatermark.NEVER && this.feedConfirmed.covers(databaseReadAt));
	}

}
