package dev.concertcache.tiered.gate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Evictions that could not reach Redis, kept in memory (bounded) until it is back. Past the bound the
 * individual keys are dropped and every cache is evicted as a whole instead: coarser, never staler. While one is
 * pending, this instance must not read its key from Redis, which still holds the value from before the write
 * ({@link #covers}).
 */
public final class PendingEvictions {

	/** The key of an eviction of a whole cache; no encoded key can equal it. */
	public static final String ALL = "*";

	/**
	 * The key of a generation move after a failover, which makes stale what Redis holds of a cache and not L1 (ADR
	 * 0039); no encoded key can equal it.
	 */
	public static final String GENERATION = "*generation";

	private final int maximumSize;

	/** Each pending eviction with the number of its latest request, so that a replay does not drop a newer one. */
	private final Map<Eviction, Long> evictions = new ConcurrentHashMap<>();

	private final AtomicLong requests = new AtomicLong();

	private volatile boolean overflowed;

	public PendingEvictions(int maximumSize) {
		this.maximumSize = maximumSize;
	}

	public synchronized void add(String cache, String key) {
		if (this.overflowed) {
			return;
		}
		this.evictions.put(new Eviction(cache, key), this.requests.incrementAndGet());
		if (this.evictions.size() > this.maximumSize) {
			// Marked before cleared: covers() never sees an empty map without the mark.
			this.overflowed = true;
			this.evictions.clear();
		}
	}

	public int size() {
		return this.overflowed ? this.maximumSize : this.evictions.size();
	}

	public boolean isEmpty() {
		return !this.overflowed && this.evictions.isEmpty();
	}

	/** Whether Redis may still hold a value of {@code key} of {@code cache} that a pending eviction removes. */
	public boolean covers(String cache, String key) {
		if (this.overflowed) {
			return true;
		}
		if (this.evictions.isEmpty()) {
			return false;
		}
		return this.evictions.containsKey(new Eviction(cache, key)) || this.evictions.containsKey(new Eviction(cache, ALL))
				|| this.evictions.containsKey(new Eviction(cache, GENERATION));
	}

	/**
	 * Whether an eviction of {@code key} of {@code cache} itself is pending (not one of the whole cache, nor the
	 * overflow's): a later write of that key may not be announced until it lands.
	 */
	public boolean coversKey(String cache, String key) {
		return !this.evictions.isEmpty() && this.evictions.containsKey(new Eviction(cache, key));
	}

	/** Whether evictions were dropped, so that every cache has to be evicted as a whole. */
	public boolean overflowed() {
		return this.overflowed;
	}

	/** The pending evictions, each with the number of its latest request (for {@link #done}). */
	public List<Map.Entry<Eviction, Long>> snapshot() {
		return new ArrayList<>(Map.copyOf(this.evictions).entrySet());
	}

	/** Forgets {@code eviction} after a replay of request {@code request} reached Redis, unless it was asked again. */
	public void done(Eviction eviction, long request) {
		this.evictions.remove(eviction, request);
	}

	public synchronized void overflowDone() {
		this.overflowed = false;
	}

	/** One eviction: a key of a cache, {@link #ALL} of it, or its {@link #GENERATION}. */
	public record Eviction(String cache, String key) {
	}

}
