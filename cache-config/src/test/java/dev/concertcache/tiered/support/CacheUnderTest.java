package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.format.CacheKeyEncoder;
import dev.concertcache.tiered.local.L1Entry;
import dev.concertcache.tiered.local.LocalTier;

import org.springframework.test.util.ReflectionTestUtils;
import org.springframework.util.ReflectionUtils;

/**
 * A cache as the application gets it (evictions after commit, warm-up routing), with the diagnostics of the
 * {@link DefaultTieredCache} under it; what it holds in L1 is read from its fields, as {@link ManagerInternals} reads
 * the manager's, so that the cache carries no accessor for tests.
 */
final class CacheUnderTest<K, V> implements TieredCache<K, V> {

	private final TieredCache<K, V> cache;

	private final DefaultTieredCache<K, V> core;

	CacheUnderTest(TieredCache<K, V> cache, DefaultTieredCache<K, V> core) {
		this.cache = cache;
		this.core = core;
	}

	@Override
	public String name() {
		return this.cache.name();
	}

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		return this.cache.lookup(key, loader);
	}

	@Override
	public void evict(K key) {
		this.cache.evict(key);
	}

	@Override
	public void evictAll() {
		this.cache.evictAll();
	}

	@Override
	public void invalidate(K key) {
		this.cache.invalidate(key);
	}

	@Override
	public void invalidateAll() {
		this.cache.invalidateAll();
	}

	/** Whether L1 holds {@code key} as a fresh, completed entry (one a read would hit). */
	boolean isInL1(K key) {
		L1Entry<V> entry = entryInL1(key);
		return entry != null && entry.isFreshAt(now());
	}

	/** Whether L1 holds {@code key} past its fresh-until time, kept to be served stale. */
	boolean isStaleInL1(K key) {
		L1Entry<V> entry = entryInL1(key);
		return entry != null && !entry.isFreshAt(now());
	}

	String redisKey(K key) {
		return this.core.redisKey(key);
	}

	void flush() {
		this.core.evictions().flush();
	}

	void onInvalidation(String key, long generation) {
		this.core.evictions().onInvalidation(key, generation);
	}

	/** The completed entry of {@code key} in L1, {@code null} if none (always in mode REDIS, which has no L1). */
	private @Nullable L1Entry<V> entryInL1(K key) {
		LocalTier<V> local = field(this.core, "local");
		if (ReflectionUtils.findField(local.getClass(), "l1") == null) {
			return null;
		}
		AsyncCache<String, L1Entry<V>> l1 = field(local, "l1");
		CacheKeyEncoder<K> keys = field(this.core, "keys");
		CompletableFuture<L1Entry<V>> future = l1.getIfPresent(keys.encode(key));
		return (future != null && future.isDone() && !future.isCompletedExceptionally()) ? future.join() : null;
	}

	private long now() {
		Ticker ticker = field(this.core, "ticker");
		return ticker.read();
	}

	@SuppressWarnings("unchecked")
	private static <T> T field(Object target, String name) {
		return (T) ReflectionTestUtils.getField(target, name);
	}

}
