package dev.concertcache.tiered;

import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.concertcache.tiered.JsonValueCodec.OtherShapeException;
import dev.concertcache.tiered.JsonValueCodec.Stored;
import dev.concertcache.tiered.JsonValueCodec.UnreadableValueException;
import dev.concertcache.tiered.RedisTier.LockAttempt;
import dev.concertcache.tiered.RedisTier.UnavailableException;


/**
 * One cache of the {@link DefaultTieredCacheManager}: Caffeine (TIERED mode only), then Redis, then the loader.
 * <p>
 * Concurrent misses of one key on this instance share one load: the first reader puts an incomplete future in
 * L1 (or in the in-flight map in REDIS mode) and loads on its own thread, the others wait for that future. An
 * invalidation that arrives meanwhile removes the future, so its value is returned to the readers that were
 * waiting for it but never stored in L1. Across instances a cold key is loaded under a short Redis lock while
 * the other instances poll Redis for the result (ADR 0011). The loaded value is written to Redis only if the
 * key still holds what the loader saw before it started, so an eviction during the load wins (ADR 0013).
 * <p>
 * Every loader call goes through the manager's {@link LoaderGuard} (circuit breaker, then bulkhead: ADR 0030).
 * Both tiers keep a value {@code stale-if-error} longer than its time to live (ADR 0031): L1 entries carry their
 * fresh-until time, Redis envelopes theirs ({@code "f"}). A read of an entry past it refreshes it like a miss
 * (single flight as above); if the load fails, the stale value is returned (the Redis one if Redis still has
 * one, else the L1 one), marked stale, and stays in L1 so that the next read tries again.
 */
final class DefaultTieredCache<K, V> implements TieredCache<K, V> {

	private static final Log logger = LogFactory.getLog(DefaultTieredCache.class);

	private static final long UNKNOWN = -1;

	private final String name;

	private final Class<K> keyType;

	private final Class<V> valueType;

	private final TieredCacheConfiguration spec;

	private final CacheKeyEncoder<K> keys;

	private final JsonValueCodec<V> codec;

	private final DefaultTieredCacheManager manager;

	private final RedisTier redis;

	private final TieredCacheMetrics.ForCache metrics;

	private final AsyncCache<String, Entry<V>> l1;

	private final ConcurrentMap<String, CompletableFuture<Entry<V>>> inFlight;

	private final LoaderGuard loaderGuard;

	private final AtomicLong generation = new AtomicLong(UNKNOWN);

	/**
	 * The highest generation heard of while this instance's own was unknown: a read of the counter that started
	 * before an evict-all message must not bring back the generation that message replaced.
	 */
	private final AtomicLong generationFloor = new AtomicLong(UNKNOWN);

	/** Runs between the Redis step of an eviction and the L1 one; tests park a writer there. */
	private volatile Runnable betweenEvictionSteps = () -> {
	};

	/** Runs when a reader found another one's load lock and is about to wait for its value; tests count it. */
	private volatile Runnable beforeLockWait = () -> {
	};

	/** Whether this is a warm-up's twin, which never routes to another twin. */
	private final boolean twin;

	DefaultTieredCache(String name, Class<K> keyType, Class<V> valueType, TieredCacheConfiguration spec,
			DefaultTieredCacheManager manager) {
		this(name, keyType, valueType, spec, manager, manager.redis(), manager.metrics(), false);
	}

	/** A warm-up's twin of a cache: the same code and settings over its own Redis keys and meters. */
	DefaultTieredCache<K, V> twin(RedisTier redis, TieredCacheMetrics metrics) {
		return new DefaultTieredCache<>(this.name, this.keyType, this.valueType, this.spec, this.manager, redis,
				metrics, true);
	}

	private DefaultTieredCache(String name, Class<K> keyType, Class<V> valueType, TieredCacheConfiguration spec,
			DefaultTieredCacheManager manager, RedisTier redis, TieredCacheMetrics metrics, boolean twin) {
		this.twin = twin;
		this.name = name;
		this.keyType = keyType;
		this.valueType = valueType;
		this.spec = spec;
		this.keys = CacheKeyEncoder.of(name, keyType);
		this.codec = new JsonValueCodec<>(manager.jsonMapper(), valueType);
		this.manager = manager;
		this.redis = redis;
		this.metrics = metrics.forCache(name);
		this.loaderGuard = manager.loaderGuard(name);
		if (manager.mode() == TieredCacheMode.TIERED) {
			this.l1 = Caffeine.newBuilder()
				.maximumSize(spec.l1MaximumSize())
				.expireAfter(new EntryExpiry<V>())
				.ticker(manager.ticker())
				.executor(Runnable::run)
				.evictionListener((String key, Entry<V> value, RemovalCause cause) -> this.metrics.eviction("l1",
						(cause == RemovalCause.SIZE) ? "size" : "expired"))
				.buildAsync();
			this.metrics.l1Size(this.l1, (cache) -> cache.synchronous().estimatedSize());
			this.inFlight = null;
		}
		else {
			this.l1 = null;
			this.inFlight = new ConcurrentHashMap<>();
		}
	}

	@Override
	public String name() {
		return this.name;
	}

	Class<K> keyType() {
		return this.keyType;
	}

	Class<V> valueType() {
		return this.valueType;
	}

	TieredCacheConfiguration spec() {
		return this.spec;
	}

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		DefaultTieredCache<K, V> twin = warmupTwin();
		if (twin != null) {
			return twin.lookup(key, loader);
		}
		String encoded = this.keys.encode(key);
		Lookup<V> lookup = (this.l1 != null) ? readThroughL1(encoded, loader) : readThroughRedis(encoded, loader);
		if (lookup.stale()) {
			this.metrics.staleServed.increment();
		}
		return lookup;
	}

	/**
	 * TIERED: a fresh L1 entry or a load in flight is a hit; a missing entry, or one past its fresh-until time,
	 * is a miss whose reader puts its own future in and loads.
	 */
	private Lookup<V> readThroughL1(String key, Supplier<Optional<V>> loader) {
		while (true) {
			CompletableFuture<Entry<V>> found = this.l1.getIfPresent(key);
			if (found == null) {
				CompletableFuture<Entry<V>> mine = new CompletableFuture<>();
				found = this.l1.get(key, (k, executor) -> mine);
				if (found == mine) {
					this.metrics.l1Miss.increment();
					return load(key, loader, null, mine).lookup;
				}
			}
			if (!found.isDone() || found.isCompletedExceptionally()) {
				// A load in flight (or one that has just failed and is on its way out): share its outcome.
				this.metrics.l1Hit.increment();
				return awaitLoad(found, key, loader);
			}
			Entry<V> entry = found.join();
			if (entry.isFreshAt(this.manager.ticker().read()) && this.manager.watermark().covers(entry.readAt)) {
				this.metrics.l1Hit.increment();
				return entry.fromL1;
			}
			// Expired, or older than what this instance has heard invalidations up to (kept only to be served if
			// the load fails): refresh it, unless another reader got there first.
			CompletableFuture<Entry<V>> mine = new CompletableFuture<>();
			if (this.l1.asMap().replace(key, found, mine)) {
				this.metrics.l1Miss.increment();
				return load(key, loader, entry, mine).lookup;
			}
		}
	}

	/** REDIS: concurrent reads of one key on this instance share one trip to Redis (and the loader). */
	private Lookup<V> readThroughRedis(String key, Supplier<Optional<V>> loader) {
		CompletableFuture<Entry<V>> mine = new CompletableFuture<>();
		CompletableFuture<Entry<V>> found = this.inFlight.putIfAbsent(key, mine);
		if (found != null) {
			this.metrics.l2Hit.increment();
			return awaitLoad(found, key, loader);
		}
		return load(key, loader, null, mine).lookup;
	}

	/**
	 * Shares the outcome of another reader's load, waiting at most the lock time, as a reader on another instance
	 * would: a load that hangs past it is not waited for, this reader loads on its own (without touching L1).
	 */
	private Lookup<V> awaitLoad(CompletableFuture<Entry<V>> found, String key, Supplier<Optional<V>> loader) {
		try {
			return found.get(this.manager.lockTtl().toNanos(), TimeUnit.NANOSECONDS).fromL1;
		}
		catch (java.util.concurrent.TimeoutException ex) {
			this.metrics.error("await");
			return loadThroughRedis(key, loader, null).lookup;
		}
		catch (java.util.concurrent.ExecutionException | java.util.concurrent.CancellationException ex) {
			return join(found).fromL1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for a load of cache '" + this.name + "'", ex);
		}
	}

	/** Completes {@code mine} (which other readers may be waiting for) with what Redis or the loader gives. */
	private Entry<V> load(String key, Supplier<Optional<V>> loader, Entry<V> staleInL1,
			CompletableFuture<Entry<V>> mine) {
		try {
			mine.complete(loadThroughRedis(key, loader, staleInL1));
		}
		catch (Throwable ex) {
			// Removed from L1 like any failed future, without Caffeine logging every loader failure.
			mine.completeExceptionally(new LoadFailure(ex));
		}
		finally {
			if (this.inFlight != null) {
				this.inFlight.remove(key, mine);
			}
		}
		return join(mine);
	}

	@Override
	public void evict(K key) {
		DefaultTieredCache<K, V> twin = warmupTwin();
		if (twin != null) {
			twin.evict(key);
			return;
		}
		String encoded = this.keys.encode(key);
		afterCommit(() -> evictNow(encoded));
	}

	@Override
	public void evictAll() {
		DefaultTieredCache<K, V> twin = warmupTwin();
		if (twin != null) {
			twin.evictAll();
			return;
		}
		afterCommit(this::evictAllNow);
	}

	@Override
	public void invalidate(K key) {
		DefaultTieredCache<K, V> twin = warmupTwin();
		if (twin != null) {
			twin.invalidate(key);
			return;
		}
		try {
			evictInRedis(this.keys.encode(key));
		}
		catch (UnavailableException ex) {
			throw new InvalidationFailedException(this.name, ex);
		}
	}

	@Override
	public void invalidateAll() {
		DefaultTieredCache<K, V> twin = warmupTwin();
		if (twin != null) {
			twin.invalidateAll();
			return;
		}
		try {
			evictAllInRedis();
		}
		catch (UnavailableException ex) {
			throw new InvalidationFailedException(this.name, ex);
		}
	}

	/** This cache's twin in the warm-up the calling thread is in, or null outside one. */
	private DefaultTieredCache<K, V> warmupTwin() {
		return this.twin ? null : this.manager.warmupTwin(this);
	}

	/**
	 * Whether this instance holds {@code key} in L1 as a fresh, completed entry (one a read would hit); for tests
	 * and diagnostics.
	 */
	boolean isInL1(K key) {
		Entry<V> entry = l1Entry(key);
		return entry != null && entry.isFreshAt(this.manager.ticker().read());
	}

	/**
	 * Whether this instance holds {@code key} in L1 past its fresh-until time, kept only to be served stale; for
	 * tests and diagnostics.
	 */
	boolean isStaleInL1(K key) {
		Entry<V> entry = l1Entry(key);
		return entry != null && !entry.isFreshAt(this.manager.ticker().read());
	}

	private Entry<V> l1Entry(K key) {
		if (this.l1 == null) {
			return null;
		}
		CompletableFuture<Entry<V>> future = this.l1.getIfPresent(this.keys.encode(key));
		return (future != null && future.isDone() && !future.isCompletedExceptionally()) ? future.join() : null;
	}

	/** The Redis key {@code key} is stored under now; for tests and diagnostics. */
	String redisKey(K key) {
		return this.redis.valueKey(this.name, generation(), this.codec.shape(), this.keys.encode(key));
	}

	/**
	 * Evicts {@code key} (encoded) from L1 here and, through Redis, on every instance; queued if Redis is down.
	 * @return whether Redis took it
	 */
	boolean evictNow(String key) {
		try {
			evictInRedis(key);
			return true;
		}
		catch (UnavailableException ex) {
			this.manager.pending().add(this.name, key);
			return false;
		}
	}

	/**
	 * Makes every entry of this cache unreachable on every instance; queued if Redis is down.
	 * @return whether Redis took it
	 */
	boolean evictAllNow() {
		try {
			evictAllInRedis();
			return true;
		}
		catch (UnavailableException ex) {
			this.manager.pending().add(this.name, PendingEvictions.ALL);
			return false;
		}
	}

	/**
	 * Tombstones the key in Redis and announces it, then clears it from L1; L1 is cleared even if Redis failed.
	 * In this order because a read between the two steps must not put the old value back: before the tombstone it
	 * can only find the old value in L1 (the write is not acknowledged yet), after it Redis holds the tombstone.
	 */
	private void evictInRedis(String key) {
		try {
			// The generation as known, not read: reading it would go through the breaker the eviction goes past.
			long current = this.redis.evict(this.name, key, this.generation.get(), this.codec.shape(),
					this.manager.tombstoneTtl().toMillis(),
					this.manager.instanceId(), this.manager.clock().millis());
			adoptGeneration(current);
			this.metrics.eviction("l2", "explicit");
			this.metrics.sent.increment();
			this.betweenEvictionSteps.run();
		}
		finally {
			if (this.inFlight != null) {
				// A read that starts after this eviction must not join a load that started before it.
				this.inFlight.remove(key);
			}
			invalidateL1(key, "explicit");
		}
	}

	/**
	 * Moves the generation in Redis and here, then clears L1 (L1 even if Redis failed): a read in between either
	 * uses the new generation or puts its entry into L1 before it is cleared.
	 */
	private void evictAllInRedis() {
		try {
			long next = this.redis.evictAll(this.name, this.manager.instanceId(), this.manager.clock().millis());
			advanceGeneration(next);
			this.metrics.eviction("l2", "generation");
			this.metrics.sent.increment();
			this.betweenEvictionSteps.run();
		}
		finally {
			if (this.inFlight != null) {
				this.inFlight.clear();
			}
			invalidateAllL1("explicit");
		}
	}

	/**
	 * Applies an invalidation message from another instance. The generation first: a read that starts after the
	 * L1 step must use the generation the message names.
	 */
	void onInvalidation(String key, long generation) {
		this.metrics.received.increment();
		if (PendingEvictions.ALL.equals(key)) {
			advanceGeneration(generation);
			if (this.inFlight != null) {
				this.inFlight.clear();
			}
			invalidateAllL1("remote");
			return;
		}
		if (adoptGeneration(generation)) {
			return;
		}
		if (this.inFlight != null) {
			this.inFlight.remove(key);
		}
		invalidateL1(key, "remote");
	}

	/**
	 * Moves to {@code current}, a generation Redis reported, if it is newer than the one this instance reads: the
	 * counter was evicted or flushed and started again (at the clock, so higher), and keys of the old generation
	 * may miss tombstones. Clears L1 then, whose entries came from the old one. Never moves back: a message sent
	 * before an evict-all this instance already applied names the generation before it. Returns whether it moved.
	 */
	private boolean adoptGeneration(long current) {
		long known = this.generation.get();
		if (known == UNKNOWN || current <= known) {
			advanceGeneration(current);
			return false;
		}
		advanceGeneration(current);
		if (this.inFlight != null) {
			this.inFlight.clear();
		}
		invalidateAllL1("generation");
		return true;
	}

	/** Forgets everything this instance knows, after invalidations may have been lost. */
	void flush() {
		this.generation.set(UNKNOWN);
		if (this.inFlight != null) {
			this.inFlight.clear();
		}
		invalidateAllL1("flush");
	}

	void advanceGeneration(long next) {
		this.generationFloor.accumulateAndGet(next, Math::max);
		this.generation.accumulateAndGet(next, (current, update) -> (current == UNKNOWN) ? UNKNOWN
				: Math.max(current, update));
	}

	private long generation() {
		long current = this.generation.get();
		if (current != UNKNOWN) {
			return current;
		}
		long read = this.redis.generation(this.name, this.manager.clock().millis());
		this.generation.compareAndSet(UNKNOWN, Math.max(read, this.generationFloor.get()));
		// An advance that saw UNKNOWN raised the floor before this reads it.
		return this.generation.accumulateAndGet(this.generationFloor.get(), Math::max);
	}

	/** Parks the next evictions between their Redis and L1 steps; for tests of that interleaving. */
	void betweenEvictionSteps(Runnable hook) {
		this.betweenEvictionSteps = hook;
	}

	void beforeLockWait(Runnable hook) {
		this.beforeLockWait = hook;
	}

	private void invalidateL1(String key, String cause) {
		if (this.l1 != null) {
			this.l1.synchronous().invalidate(key);
			this.metrics.eviction("l1", cause);
		}
	}

	private void invalidateAllL1(String cause) {
		if (this.l1 != null) {
			this.l1.synchronous().invalidateAll();
			this.metrics.eviction("l1", cause);
		}
	}

	private Entry<V> loadThroughRedis(String key, Supplier<Optional<V>> loader, Entry<V> staleInL1) {
		long started = this.manager.ticker().read();
		long readAt = this.manager.watermark().now();
		Miss miss = readRedis(key);
		if (miss.value != null) {
			@SuppressWarnings("unchecked")
			Optional<V> hit = (Optional<V>) miss.value;
			return fresh(hit, Source.L2, readAt);
		}
		Optional<V> loaded;
		try {
			loaded = load(loader);
		}
		catch (RuntimeException | Error ex) {
			if (miss.token != null) {
				unlockQuietly(miss);
			}
			// Only an unavailable loader may be answered with a stale value: a bug must show, not hide for minutes.
			Entry<V> stale = (ex instanceof RuntimeException && LoaderFailures.isUnavailable(ex))
					? staleFallback(miss, staleInL1) : null;
			if (stale != null) {
				if (logger.isDebugEnabled()) {
					logger.debug("Serving a stale value of cache '" + this.name + "': " + ex);
				}
				return stale;
			}
			throw ex;
		}
		if (miss.valueKey != null) {
			store(miss, loaded, started);
		}
		return fresh(loaded, Source.LOADER, readAt);
	}

	/** An L1 entry for a value just read from Redis or loaded: fresh for the (jittered) L1 time to live. */
	private Entry<V> fresh(Optional<V> value, Source source, long readAt) {
		long now = this.manager.ticker().read();
		long freshUntil = now + this.spec.l1Nanos(value.isEmpty());
		return new Entry<>(value, freshUntil, freshUntil + this.spec.l1StaleNanos(value.isEmpty()), false, source,
				readAt);
	}

	/**
	 * What to serve when the load failed: the value Redis still keeps past its freshness (it is at least as new
	 * as this instance's copy), else the stale L1 entry, each only within its stale-if-error window; {@code null}
	 * if neither or if the cache serves nothing stale.
	 */
	private Entry<V> staleFallback(Miss miss, Entry<V> staleInL1) {
		if (!this.spec.servesStale()) {
			return null;
		}
		long now = this.manager.ticker().read();
		if (miss.seen != null && !miss.seen.isEmpty() && !JsonValueCodec.isTombstone(miss.seen)) {
			Stored<V> stored = decode(miss.seen);
			if (stored != null && stored.value().isPresent() && stored.freshUntil() != JsonValueCodec.ALWAYS_FRESH) {
				long left = stored.freshUntil() + this.spec.l2StaleMillis(false) - this.manager.clock().millis();
				if (left > 0) {
					// Fresh until now: the next read tries the loader again.
					return new Entry<>(stored.value(), now, now + TimeUnit.MILLISECONDS.toNanos(left), true, Source.L2,
							InvalidationWatermark.NEVER);
				}
			}
		}
		if (staleInL1 != null && staleInL1.value.isPresent() && now - staleInL1.staleUntil < 0) {
			return staleInL1.servedStale();
		}
		return null;
	}

	private Miss readRedis(String key) {
		if (this.manager.pending().covers(this.name, key)) {
			// Redis still holds what this instance's own write replaced: the writer must not read it back.
			return Miss.NO_REDIS;
		}
		long generation;
		String raw;
		try {
			generation = generation();
			String valueKey = this.redis.valueKey(this.name, generation, this.codec.shape(), key);
			raw = this.redis.get(this.name, valueKey);
			String lockKey = this.redis.lockKey(this.name, generation, this.codec.shape(), key);
			if (raw != null && !JsonValueCodec.isTombstone(raw)) {
				Stored<V> stored = decode(raw);
				boolean fresh = stored != null && stored.isFreshAt(this.manager.clock().millis());
				countL2(fresh);
				if (fresh) {
					return Miss.hit(stored.value());
				}
				if (stored == null) {
					// An unreadable value is replaced by the loaded one, without the lock: it is not a cold key.
					return Miss.load(valueKey, lockKey, raw, null);
				}
				// Kept only to be served stale: load it again like a cold key, remembering it for a failure.
			}
			else {
				countL2(false);
			}
			return awaitOrLock(valueKey, lockKey, (raw != null) ? raw : "");
		}
		catch (UnavailableException ex) {
			return Miss.NO_REDIS;
		}
	}

	private Miss awaitOrLock(String valueKey, String lockKey, String seen) {
		String token = UUID.randomUUID().toString();
		long lockMillis = this.manager.lockTtl().toMillis();
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(lockMillis);
		while (true) {
			LockAttempt attempt;
			try {
				long now = this.manager.clock().millis();
				// Registered for as long as this load may still store its value (see store()).
				attempt = this.redis.getOrLock(this.name, valueKey, lockKey, token, lockMillis, now, this.codec.shape(),
						now + this.manager.tombstoneTtl().toMillis());
			}
			catch (UnavailableException ex) {
				return Miss.load(valueKey, lockKey, seen, null);
			}
			if (attempt.hit()) {
				Stored<V> stored = decode(attempt.raw());
				return (stored != null) ? Miss.hit(stored.value())
						: Miss.load(valueKey, lockKey, attempt.raw(), null);
			}
			if (attempt.locked()) {
				return Miss.load(valueKey, lockKey, attempt.raw(), token);
			}
			this.beforeLockWait.run();
			if (System.nanoTime() - deadline >= 0 || !pause()) {
				// The holder is slow or gone: load without the lock rather than wait any longer.
				return Miss.load(valueKey, lockKey, attempt.raw(), null);
			}
		}
	}

	private boolean pause() {
		try {
			Thread.sleep(this.manager.lockPollInterval().toMillis());
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/** Calls the loader through the guard; the load timer measures the call itself, not the wait for a slot. */
	private Optional<V> load(Supplier<Optional<V>> loader) {
		try {
			return this.loaderGuard.call(() -> {
				long started = System.nanoTime();
				Optional<V> loaded;
				try {
					loaded = loader.get();
				}
				catch (RuntimeException | Error ex) {
					this.metrics.load(System.nanoTime() - started, "failure");
					throw ex;
				}
				if (loaded == null) {
					loaded = Optional.empty();
				}
				this.metrics.load(System.nanoTime() - started, loaded.isPresent() ? "success" : "absent");
				return loaded;
			});
		}
		catch (LoadRejectedException ex) {
			this.metrics.rejected(ex.getReason()).increment();
			throw ex;
		}
	}

	private void store(Miss miss, Optional<V> loaded, long started) {
		long elapsed = this.manager.ticker().read() - started;
		try {
			if (elapsed >= this.manager.tombstoneTtl().toNanos() / 2) {
				// A tombstone set during this load may have expired already: the compare below could not see it.
				if (miss.token != null) {
					this.redis.unlock(this.name, miss.lockKey, miss.token);
				}
				return;
			}
			long ttl = this.spec.l2Millis(loaded.isEmpty());
			String encoded;
			try {
				encoded = this.codec.encode(loaded, this.manager.clock().millis() + ttl);
			}
			catch (RuntimeException ex) {
				this.metrics.error("serialize");
				logger.warn("Cannot write a value of cache '" + this.name + "' as JSON", ex);
				if (miss.token != null) {
					this.redis.unlock(this.name, miss.lockKey, miss.token);
				}
				return;
			}
			this.redis.storeIfUnchanged(this.name, miss.valueKey, miss.lockKey, miss.seen, encoded,
					ttl + this.spec.l2StaleMillis(loaded.isEmpty()), miss.token, this.codec.shape(),
					this.manager.clock().millis());
		}
		catch (UnavailableException ex) {
			// Redis is down or slow: the value is served from L1 only, which is what the breaker is for.
		}
	}

	private void unlockQuietly(Miss miss) {
		try {
			this.redis.unlock(this.name, miss.lockKey, miss.token);
		}
		catch (UnavailableException ex) {
			// The lock expires by itself.
		}
	}

	private Stored<V> decode(String raw) {
		try {
			return this.codec.decode(raw);
		}
		catch (UnreadableValueException ex) {
			this.metrics.error((ex instanceof OtherShapeException) ? "shape" : "deserialize");
			if (logger.isDebugEnabled()) {
				logger.debug("Unreadable value in cache '" + this.name + "', treated as a miss: " + ex.getMessage());
			}
			return null;
		}
	}

	private void countL2(boolean hit) {
		((hit) ? this.metrics.l2Hit : this.metrics.l2Miss).increment();
	}

	private void afterCommit(Runnable eviction) {
		if (TransactionSynchronizationManager.isSynchronizationActive()) {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCommit() {
					runQuietly(eviction);
				}

			});
		}
		else {
			runQuietly(eviction);
		}
	}

	private void runQuietly(Runnable eviction) {
		try {
			eviction.run();
		}
		catch (RuntimeException ex) {
			// A cache error never fails the write that caused it; the TTL bounds what is left stale.
			this.metrics.error("evict");
			logger.warn("Eviction in cache '" + this.name + "' failed", ex);
		}
	}

	private static <T> T join(CompletableFuture<T> future) {
		try {
			return future.join();
		}
		catch (LoadFailure ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw ex;
		}
		catch (CompletionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	/**
	 * A loader's failure as its future carries it: a cancellation, which Caffeine drops without a warning (the
	 * caller gets the loader's own exception and decides what to log).
	 */
	private static final class LoadFailure extends java.util.concurrent.CancellationException {

		LoadFailure(Throwable cause) {
			initCause(cause);
		}

	}

	/**
	 * What a read found in Redis: a value, or what to do after loading.
	 */
	private static final class Miss {

		static final Miss NO_REDIS = new Miss(null, null, null, null, null);

		final Optional<?> value;

		final String valueKey;

		final String lockKey;

		final String seen;

		final String token;

		private Miss(Optional<?> value, String valueKey, String lockKey, String seen, String token) {
			this.value = value;
			this.valueKey = valueKey;
			this.lockKey = lockKey;
			this.seen = seen;
			this.token = token;
		}

		static Miss hit(Optional<?> value) {
			return new Miss(value, null, null, null, null);
		}

		static Miss load(String valueKey, String lockKey, String seen, String token) {
			return new Miss(null, valueKey, lockKey, seen, token);
		}

	}

	/**
	 * An L1 entry: the value with the ticker times until which it is fresh and until which it may be served
	 * stale, whether it is being served stale now (the outcome of a failed load), and where it came from. Its
	 * lookups are made once, so that a hit allocates nothing: {@code lookup} as the reader that made it gets it,
	 * {@code fromL1} as every later reader does.
	 */
	static final class Entry<V> {

		final Optional<V> value;

		final long freshUntil;

		final long staleUntil;

		final boolean stale;

		/** When the value was read from Redis or the loader, on the {@link InvalidationWatermark}'s clock. */
		final long readAt;

		final Lookup<V> lookup;

		final Lookup<V> fromL1;

		Entry(Optional<V> value, long freshUntil, long staleUntil, boolean stale, Source source, long readAt) {
			this.value = value;
			this.freshUntil = freshUntil;
			this.staleUntil = staleUntil;
			this.stale = stale;
			this.readAt = readAt;
			this.lookup = new Lookup<>(value, stale, source);
			this.fromL1 = (source == Source.L1) ? this.lookup : new Lookup<>(value, stale, Source.L1);
		}

		boolean isFreshAt(long now) {
			return now - this.freshUntil < 0;
		}

		Entry<V> servedStale() {
			return this.stale ? this
					: new Entry<>(this.value, this.freshUntil, this.staleUntil, true, Source.L1, this.readAt);
		}

	}

	/**
	 * L1 time to live per entry: until its stale-until time (its fresh-until time, jittered, plus the cache's
	 * stale-if-error window for values), fixed when the entry was made, so that a refresh that fails and puts the
	 * stale entry back does not extend it.
	 */
	private static final class EntryExpiry<V> implements Expiry<String, Entry<V>> {

		@Override
		public long expireAfterCreate(String key, Entry<V> entry, long currentTime) {
			return Math.max(0, entry.staleUntil - currentTime);
		}

		@Override
		public long expireAfterUpdate(String key, Entry<V> entry, long currentTime, long currentDuration) {
			return Math.max(0, entry.staleUntil - currentTime);
		}

		@Override
		public long expireAfterRead(String key, Entry<V> entry, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

}
