package dev.concertcache.api.capture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.concertcache.api.concert.ConcertCaches.Stale;

/**
 * The invalidations the lander has not landed yet, each with its own retry schedule: an entry Redis refused is
 * tried again after a wait that doubles with each refusal, up to a bound, while every other entry lands at once.
 * A whole cache pending covers every entry of that cache (its generation move, when it lands, makes all of them
 * unreachable), so entries of a cache whose whole is pending are not kept. Times are {@code Ticker} nanoseconds.
 * Not thread-safe: the landing thread's own.
 */
final class PendingInvalidations {

	/**
	 * Entries of one cache kept before that cache is invalidated as a whole instead: bounds the memory of a long
	 * outage of one node, far above what a failover's seconds accumulate.
	 */
	static final int MAX_ENTRIES_PER_CACHE = 100_000;

	private final Duration initialBackoff;

	private final Duration maxBackoff;

	private final Map<Stale, Retry> entries = new LinkedHashMap<>();

	PendingInvalidations(Duration initialBackoff, Duration maxBackoff) {
		this.initialBackoff = initialBackoff;
		this.maxBackoff = maxBackoff;
	}

	/** Adds {@code stale}, due at once; an entry pending already keeps its schedule. */
	void add(Collection<Stale> stale, long now) {
		for (Stale each : stale) {
			if (each.key() == null) {
				this.entries.keySet().removeIf((pending) -> pending.cache().equals(each.cache()));
				this.entries.put(each, new Retry(now, new Backoff(this.initialBackoff, this.maxBackoff)));
			}
			else if (!this.entries.containsKey(new Stale(each.cache(), null))) {
				this.entries.computeIfAbsent(each,
						(entry) -> new Retry(now, new Backoff(this.initialBackoff, this.maxBackoff)));
			}
		}
		stale.stream().map(Stale::cache).distinct().filter((cache) -> count(cache) > MAX_ENTRIES_PER_CACHE).toList()
			.forEach((cache) -> add(List.of(new Stale(cache, null)), now));
	}

	/**
	 * The entries due at {@code now}: those never sent first, then those Redis refused, each in the order they were
	 * added, so that a node that answers slowly delays the retries of its keys, not the first sending of new ones.
	 */
	List<Stale> due(long now) {
		List<Stale> fresh = new ArrayList<>();
		List<Stale> retries = new ArrayList<>();
		this.entries.forEach((stale, retry) -> {
			if (now - retry.dueAt >= 0) {
				(retry.refused ? retries : fresh).add(stale);
			}
		});
		fresh.addAll(retries);
		return fresh;
	}

	/** {@code stale} has landed: it is not tried again. */
	void landed(Stale stale) {
		this.entries.remove(stale);
	}

	/**
	 * Redis refused {@code stale}, which {@link #due} returned: it is tried again after its next wait.
	 * @param everyInstanceTold whether every instance heard that it has not landed (each reads it from the
	 * database until it does)
	 */
	void refused(Stale stale, boolean everyInstanceTold, long now) {
		Retry retry = this.entries.get(stale);
		retry.refused = true;
		retry.everyInstanceTold = everyInstanceTold;
		retry.dueAt = now + retry.backoff.failed().toNanos();
	}

	boolean isEmpty() {
		return this.entries.isEmpty();
	}

	/** Whether every instance heard of each pending entry that it has not landed. */
	boolean everyInstanceTold() {
		return this.entries.values().stream().allMatch((retry) -> retry.everyInstanceTold);
	}

	private long count(String cache) {
		return this.entries.keySet().stream().filter((stale) -> stale.cache().equals(cache)).count();
	}

	/** When an entry is next tried, its waits, and whether every instance heard that it has not landed. */
	private static final class Retry {

		private final Backoff backoff;

		private long dueAt;

		private boolean refused;

		private boolean everyInstanceTold;

		Retry(long dueAt, Backoff backoff) {
			this.dueAt = dueAt;
			this.backoff = backoff;
		}

	}

}
