package dev.concertcache.tiered.local;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.format.StoredDigest;
import dev.concertcache.tiered.gate.InvalidationWatermark;

/**
 * An L1 entry: the value with the ticker times until which it is fresh and until which it may be served stale,
 * whether it is being served stale now (the outcome of a failed load), and where it came from. Its lookups are
 * made once, so that a hit allocates nothing: {@code lookup} as the reader that made it gets it, {@code fromL1} as
 * every later reader does.
 *
 * @param <V> the value type
 */
public final class L1Entry<V> {

	@SuppressWarnings("rawtypes")
	private static final AtomicIntegerFieldUpdater<L1Entry> REFRESH_CLAIMED = AtomicIntegerFieldUpdater
		.newUpdater(L1Entry.class, "refreshClaimed");

	public final Optional<V> value;

	public final long freshUntil;

	/** From when a hit refreshes it in the background (refresh-ahead); {@code freshUntil} for none. */
	public final long refreshAt;

	public final long staleUntil;

	public final boolean stale;

	/** When the value was read from Redis or the loader, on the {@link InvalidationWatermark}'s clock. */
	public final long readAt;

	/**
	 * When the value was read from the database, on the same clock, {@link InvalidationWatermark#NEVER} if unknown:
	 * what the change feed's gate goes by (ADR 0039).
	 */
	public final long databaseReadAt;

	/** The Redis bytes the value was decoded from or stored as, {@code null} if unknown. */
	public final @Nullable StoredDigest digest;

	public final Lookup<V> lookup;

	public final Lookup<V> fromL1;

	/** 1 once a hit started this entry's refresh-ahead: one per entry, without an object per entry. */
	private volatile int refreshClaimed;

	public L1Entry(Optional<V> value, long freshUntil, long refreshAt, long staleUntil, boolean stale, Source source,
			long readAt, long databaseReadAt, @Nullable StoredDigest digest) {
		this.value = value;
		this.freshUntil = freshUntil;
		this.refreshAt = refreshAt;
		this.staleUntil = staleUntil;
		this.stale = stale;
		this.readAt = readAt;
		this.databaseReadAt = databaseReadAt;
		this.digest = digest;
		this.lookup = new Lookup<>(value, stale, source);
		this.fromL1 = (source == Source.L1) ? this.lookup : new Lookup<>(value, stale, Source.L1);
	}

	public boolean isFreshAt(long now) {
		return now - this.freshUntil < 0;
	}

	/** Whether a hit at {@code now} is the first in the refresh-ahead window: that hit refreshes the entry. */
	public boolean claimRefreshAt(long now) {
		return now - this.refreshAt >= 0 && this.refreshClaimed == 0 && REFRESH_CLAIMED.compareAndSet(this, 0, 1);
	}

	/**
	 * This value marked stale, served at {@code now}: a stale entry's fresh-until time is when it was last served
	 * for want of a loader, from which a reader waits the loader's retry interval before it tries the loader again.
	 */
	public L1Entry<V> servedStale(long now) {
		return new L1Entry<>(this.value, now, now, this.staleUntil, true, Source.L1, this.readAt,
				this.databaseReadAt, this.digest);
	}

	/**
	 * L1 time to live per entry: until its stale-until time (its fresh-until time, jittered, plus the cache's
	 * stale-if-error window for values), fixed when the entry was made, so that a refresh that fails and puts the
	 * stale entry back does not extend it. On {@code ticker}, the one Caffeine measures with.
	 */
	public static <V> Expiry<String, L1Entry<V>> expiry(Ticker ticker) {
		return Expiry.writing((key, entry) -> Duration.ofNanos(Math.max(0, entry.staleUntil - ticker.read())));
	}

}
