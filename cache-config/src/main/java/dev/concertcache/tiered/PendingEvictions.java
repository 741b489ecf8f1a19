package dev.concertcache.tiered;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Evictions that could not reach Redis, kept in memory (bounded) until it is back. Past the bound the
 * individual keys are dropped and every cache is evicted as a whole instead: coarser, never staler.
 */
final class PendingEvictions {

	/** The key of an eviction of a whole cache; no encoded key can equal it. */
	static final String ALL = "*";

	private final int maximumSize;

	private final Set<Eviction> evictions = new LinkedHashSet<>();

	private boolean overflowed;

	PendingEvictions(int maximumSize) {
		this.maximumSize = maximumSize;
	}

	synchronized void add(String cache, String key) {
		if (this.overflowed) {
			return;
		}
		this.evictions.add(new Eviction(cache, key));
		if (this.evictions.size() > this.maximumSize) {
			this.evictions.clear();
			this.overflowed = true;
		}
	}

	synchronized int size() {
		return this.overflowed ? this.maximumSize : this.evictions.size();
	}

	synchronized boolean isEmpty() {
		return !this.overflowed && this.evictions.isEmpty();
	}

	/** Whether evictions were dropped, so that every cache has to be evicted as a whole. */
	synchronized boolean overflowed() {
		return this.overflowed;
	}

	synchronized List<Eviction> snapshot() {
		return new ArrayList<>(this.evictions);
	}

	synchronized void done(Eviction eviction) {
		this.evictions.remove(eviction);
	}

	synchronized void overflowDone() {
		this.overflowed = false;
	}

	/** One eviction: a key of a cache, or {@link #ALL} of it. */
	record Eviction(String cache, String key) {
	}

}
