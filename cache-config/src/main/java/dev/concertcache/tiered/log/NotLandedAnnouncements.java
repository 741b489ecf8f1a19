package dev.concertcache.tiered.log;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.github.benmanes.caffeine.cache.Ticker;

import dev.concertcache.tiered.gate.PendingEvictions;

/**
 * When the other instances are to be told, again, of an eviction of one cache that Redis did not take (ADR 0039,
 * "While a primary is down", rule 2): once, then at most once per max-silence while it stays not landed, so that
 * a retry every 25 ms does not clear every instance's L1 as often, and an instance started meanwhile still hears of
 * it within max-silence. Hearing another instance's announcement counts as told: they heard it too.
 */
public final class NotLandedAnnouncements {

	/** Keys remembered at most; past it all are forgotten: each is announced once more, never fewer times. */
	public static final int MAXIMUM_KEYS = 10_000;

	private final Ticker ticker;

	private final long intervalNanos;

	/** Per encoded key ({@link PendingEvictions#ALL} for the whole cache), when the others were last told. */
	private final Map<String, Long> told = new ConcurrentHashMap<>();

	public NotLandedAnnouncements(Ticker ticker, Duration interval) {
		this.ticker = ticker;
		this.intervalNanos = interval.toNanos();
	}

	/**
	 * Whether the others are to be told of {@code key}'s eviction now; if so, it counts as told from now (one retry
	 * tells them, not two at once), unless {@link #notTold} follows.
	 */
	public boolean claim(String key) {
		long now = this.ticker.read();
		if (this.told.size() >= MAXIMUM_KEYS) {
			this.told.clear();
		}
		boolean[] claimed = new boolean[1];
		this.told.compute(key, (ignored, last) -> {
			claimed[0] = last == null || now - last >= this.intervalNanos;
			return claimed[0] ? now : last;
		});
		return claimed[0];
	}

	/** The announcement {@link #claim} allowed did not reach the stream: the next retry tells them. */
	public void notTold(String key) {
		this.told.remove(key);
	}

	/** The others heard of {@code key}'s eviction now, from another instance. */
	public void heard(String key) {
		if (this.told.size() >= MAXIMUM_KEYS) {
			this.told.clear();
		}
		this.told.put(key, this.ticker.read());
	}

	/** {@code key}'s eviction landed; the whole cache's landing covers every key's. */
	public void landed(String key) {
		if (PendingEvictions.ALL.equals(key)) {
			this.told.clear();
		}
		else {
			this.told.remove(key);
		}
	}

}
