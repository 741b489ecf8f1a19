package dev.concertcache.tiered.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import com.github.benmanes.caffeine.cache.Ticker;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.InvalidationFailedException;
import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.eviction.CacheEvictions;
import dev.concertcache.tiered.format.CacheKeyEncoder;
import dev.concertcache.tiered.format.StoredDigest;
import dev.concertcache.tiered.gate.FreshnessGate;
import dev.concertcache.tiered.gate.InvalidationWatermark;
import dev.concertcache.tiered.hotset.HotSetMember;
import dev.concertcache.tiered.loader.LoadRejectedException;
import dev.concertcache.tiered.loader.LoaderFailures;
import dev.concertcache.tiered.loader.LoaderGuard;
import dev.concertcache.tiered.local.L1Entry;
import dev.concertcache.tiered.local.Loads;
import dev.concertcache.tiered.local.LocalTier;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;
import dev.concertcache.tiered.redis.RedisLoadProtocol;
import dev.concertcache.tiered.redis.RedisRead;
import dev.concertcache.tiered.redis.RedisUnavailableException;

/**
 * One cache of the {@link DefaultTieredCacheManager}: its {@link LocalTier} (Caffeine in mode TIERED, only the
 * single flight in mode REDIS), then Redis through the {@link RedisLoadProtocol}, then the loader. Evictions
 * happen now: the manager wraps the cache in a {@link TransactionAwareTieredCacheDecorator} (after commit) and
 * a {@link ThreadRoutedTieredCache} (to a warm-up's twin).
 * <p>
 * Every loader call goes through the cache's {@link LoaderGuard} (ADR 0030); what a failed load may still serve,
 * {@link StaleIfError} picks (ADR 0031).
 */
final class DefaultTieredCache<K, V> implements TieredCache<K, V>, HotSetMember {

	private static final Log logger = LogFactory.getLog(DefaultTieredCache.class);

	private final String name;

	private final Class<K> keyType;

	private final Class<V> valueType;

	private final CacheKeyEncoder<K> keys;

	private final LocalTier<V> local;

	private final RedisLoadProtocol<V> redis;

	private final StaleIfError<V> staleIfError;

	private final LoaderGuard loaderGuard;

	private final TieredCacheConfiguration spec;

	private final Ticker ticker;

	private final FreshnessGate gate;

	private final TieredCacheMetrics.ForCache metrics;

	private final Loads<V> loads = new Loads<>() {

		@Override
		public L1Entry<V> load(String key, Supplier<Optional<V>> loader, @Nullable L1Entry<V> staleInL1) {
			return loadThroughRedis(key, loader, staleInL1, false);
		}

		@Override
		public L1Entry<V> refresh(String key, Supplier<Optional<V>> loader, L1Entry<V> current) {
			return loadThroughRedis(key, loader, current, true);
		}

		@Override
		public @Nullable L1Entry<V> whileUnreachable(String key, L1Entry<V> previous) {
			RuntimeException unreachable = DefaultTieredCache.this.loaderGuard.lastUnreachable();
			return (unreachable != null) ? staleIfError(unreachable, key, RedisRead.unavailable(), previous, false)
					: null;
		}

		@Override
		public @Nullable L1Entry<V> againWhileUnreachable(String key, L1Entry<V> servedStale) {
			long retryNanos = DefaultTieredCache.this.loaderGuard.openWait().toNanos();
			return (DefaultTieredCache.this.ticker.read() - servedStale.freshUntil < retryNanos)
					? whileUnreachable(key, servedStale) : null;
		}

	};

	private final CacheEvictions evictions;

	DefaultTieredCache(String name, Class<K> keyType, Class<V> valueType, TieredCacheConfiguration spec,
			Collaborators<V> collaborators) {
		this.name = name;
		this.keyType = keyType;
		this.valueType = valueType;
		this.spec = spec;
		this.keys = CacheKeyEncoder.of(name, keyType);
		this.local = collaborators.local();
		this.redis = collaborators.redis();
		this.staleIfError = collaborators.staleIfError();
		this.loaderGuard = collaborators.loaderGuard();
		this.ticker = collaborators.ticker();
		this.gate = collaborators.gate();
		this.metrics = collaborators.metrics();
		this.evictions = collaborators.evictions();
	}

	/** This cache's evictions and the invalidations it hears, for the manager's dispatch, retries and failovers. */
	CacheEvictions evictions() {
		return this.evictions;
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

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		Lookup<V> lookup = this.local.read(this.keys.encode(key), loader, this.loads);
		if (lookup.stale()) {
			this.metrics.staleServed.increment();
		}
		return lookup;
	}

	/** {@link #lookup}'s value if it is in this instance's memory; null if the lookup would have to wait for it. */
	@Nullable Lookup<V> lookupInMemory(K key, Supplier<Optional<V>> loader) {
		return this.local.readInMemory(this.keys.encode(key), loader, this.loads);
	}

	/** Evicts now (the decorator defers it to after the commit); queued if Redis is down. */
	@Override
	public void evict(K key) {
		this.evictions.evictNow(this.keys.encode(key));
	}

	/** Evicts now (the decorator defers it to after the commit); queued if Redis is down. */
	@Override
	public void evictAll() {
		this.evictions.evictAllNow();
	}

	@Override
	public void invalidate(K key) {
		String encoded = this.keys.encode(key);
		try {
			// Pending as evict's would be: this instance must not read Redis' old value back until it lands.
			this.evictions.evictInRedis(encoded);
		}
		catch (RedisUnavailableException ex) {
			throw new InvalidationFailedException(this.name, ex, ex.everyInstanceTold());
		}
	}

	@Override
	public void invalidateAll() {
		try {
			this.evictions.evictAllInRedis();
		}
		catch (RedisUnavailableException ex) {
			throw new InvalidationFailedException(this.name, ex, ex.everyInstanceTold());
		}
	}

	/** The Redis key {@code key} is stored under now; for tests and diagnostics. */
	String redisKey(K key) {
		return this.redis.valueKey(this.keys.encode(key));
	}

	@Override
	public List<String> hottest(int n) {
		return this.local.hottest(n);
	}

	/**
	 * As a read of each key would: the current generation and shape, no tombstone, no key this instance's pending
	 * eviction covers, and each key reserved in L1 before Redis is read, so that an invalidation heard meanwhile wins.
	 * @throws RedisUnavailableException if Redis cannot be used
	 */
	@Override
	public int fill(List<String> keys) {
		List<String> reservedKeys = new ArrayList<>(keys.size());
		List<CompletableFuture<L1Entry<V>>> reservations = new ArrayList<>(keys.size());
		for (String key : keys) {
			CompletableFuture<L1Entry<V>> reserved = this.local.reserve(key);
			if (reserved != null) {
				reservedKeys.add(key);
				reservations.add(reserved);
			}
		}
		if (reservedKeys.isEmpty()) {
			return 0;
		}
		long readAt = this.gate.now();
		List<RedisRead.@Nullable Hit<V>> hits;
		try {
			hits = this.redis.readFresh(reservedKeys);
		}
		catch (RuntimeException | Error ex) {
			for (int i = 0; i < reservedKeys.size(); i++) {
				this.local.fill(reservedKeys.get(i), reservations.get(i), null);
			}
			throw ex;
		}
		int filled = 0;
		for (int i = 0; i < reservedKeys.size(); i++) {
			RedisRead.Hit<V> hit = hits.get(i);
			L1Entry<V> entry = (hit != null)
					? fresh(hit.value(), Source.L2, readAt, databaseReadAt(hit, readAt), hit.digest())
					: null;
			if (this.local.fill(reservedKeys.get(i), reservations.get(i), entry)) {
				filled++;
			}
		}
		return filled;
	}

	/** @param refresh whether refresh-ahead asks (its Redis read is counted apart from the callers' gets) */
	private L1Entry<V> loadThroughRedis(String key, Supplier<Optional<V>> loader, @Nullable L1Entry<V> staleInL1,
			boolean refresh) {
		long started = this.ticker.read();
		// Before the read: an invalidation heard after this instant may postdate the value read.
		long readAt = this.gate.now();
		boolean behindTheFeed = !this.gate.trustsRedis();
		if (behindTheFeed) {
			this.metrics.feedBehind.increment();
		}
		// Behind the feed, Redis may lack tombstones of changes not confirmed (ADR 0039): only a value read from the
		// database within max-lag is a hit; any other is loaded under the fleet's load lock, one load per key for the
		// fleet. Not while the database was last found out of reach: the load is then the one trial or rejected at
		// once, and the lock would only cost two round trips and make the fleet's readers of the key wait.
		RedisRead<V> read = !behindTheFeed
				? ((refresh && staleInL1 != null) ? this.redis.refresh(key, staleInL1) : this.redis.read(key, staleInL1))
				: (this.loaderGuard.lastUnreachable() != null) ? RedisRead.unavailable()
						: this.redis.readBehindTheFeed(key, this.gate.feedMaxLag());
		if (read instanceof RedisRead.Hit<V> hit) {
			return fresh(hit.value(), Source.L2, readAt, databaseReadAt(hit, readAt), hit.digest());
		}
		Optional<V> loaded;
		try {
			loaded = load(loader);
		}
		catch (RuntimeException | Error ex) {
			this.redis.unlockQuietly(read);
			// What Redis held behind the feed is what the gate refused: not a candidate beside the L1 entry.
			RedisRead<V> candidate = behindTheFeed ? RedisRead.unavailable() : read;
			L1Entry<V> stale = (ex instanceof RuntimeException failure)
					? staleIfError(failure, key, candidate, staleInL1, true) : null;
			if (stale != null) {
				if (logger.isDebugEnabled()) {
					logger.debug("Serving a stale value of cache '" + this.name + "': " + ex);
				}
				return stale;
			}
			throw ex;
		}
		StoredDigest stored = (read instanceof RedisRead.Load<V> load)
				? this.redis.store(load, loaded, started) : null;
		return fresh(loaded, Source.LOADER, readAt, readAt, stored);
	}

	/**
	 * What a failed load may be answered with (ADR 0031), {@code null} for nothing. Only an unavailable loader may be
	 * answered with a stale value: a bug must show, not hide for minutes. What the freshness gate refused (L1 entries
	 * older than the last invalidations heard or the feed's last confirmation, Redis while the feed is behind) is
	 * served only while the database cannot be reached: while it answers but sheds this load (a full bulkhead, a
	 * timeout), the refused value may be the old one of a committed write, and the failure is the honest answer.
	 * @param askRedis whether to read what Redis holds when the read did not (the feed behind): not for a reader
	 * that rides on another's reload, which asks it once for all of them
	 */
	private @Nullable L1Entry<V> staleIfError(RuntimeException failure, String key, RedisRead<V> read,
			@Nullable L1Entry<V> staleInL1, boolean askRedis) {
		if (!LoaderFailures.isUnavailable(failure)) {
			return null;
		}
		boolean unreachable = LoaderFailures.isUnreachable(failure);
		RedisRead<V> inRedis = (askRedis && unreachable && read == RedisRead.<V>unavailable() && !this.gate.trustsRedis())
				? this.redis.lastKnown(key) : read;
		L1Entry<V> inL1 = (staleInL1 != null && (unreachable || isVouchedFor(key, staleInL1))) ? staleInL1 : null;
		L1Entry<V> served = this.staleIfError.fallback(inRedis, inL1);
		if (served == null && unreachable && !this.gate.pending().coversKey(this.name, key)) {
			// What is still within its time to live is served even by a cache that serves nothing past it.
			served = this.staleIfError.withinTimeToLive(inRedis, inL1);
		}
		return served;
	}

	/**
	 * Whether the freshness gate would serve {@code entry} if it were within its time to live: it is not older than
	 * what this instance has heard invalidations and the feed's confirmations up to, and no eviction of it is pending.
	 */
	private boolean isVouchedFor(String key, L1Entry<V> entry) {
		return this.gate.servesFromL1(this.name, key, entry.readAt, entry.databaseReadAt);
	}

	/**
	 * When a value read from Redis at {@code readAt} (watermark clock) was read from the database, on the same
	 * clock: its age by the Redis server's clock before {@code readAt}, which is before the server measured it.
	 */
	private static long databaseReadAt(RedisRead.Hit<?> hit, long readAt) {
		return (hit.readAgo() == RedisRead.Hit.UNKNOWN_AGE) ? InvalidationWatermark.NEVER
				: readAt - TimeUnit.MILLISECONDS.toNanos(hit.readAgo());
	}

	/**
	 * An L1 entry for a value just read from Redis or loaded: fresh for the (jittered) L1 time to live.
	 * @param digest the Redis bytes it was read from or stored as, so that a refresh that finds them again keeps
	 * the instance
	 */
	private L1Entry<V> fresh(Optional<V> value, Source source, long readAt, long databaseReadAt,
			@Nullable StoredDigest digest) {
		long ttl = this.spec.l1Nanos(value.isEmpty());
		long freshUntil = this.ticker.read() + ttl;
		return new L1Entry<>(value, freshUntil, freshUntil - this.spec.l1RefreshAheadNanos(ttl),
				freshUntil + this.spec.l1StaleNanos(value.isEmpty()), false, source, readAt, databaseReadAt, digest);
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

	/**
	 * What a cache is built from: its tiers, its evictions, its fallback and guard, and what the manager's caches
	 * share (the ticker, the freshness gate, meters).
	 */
	record Collaborators<V>(LocalTier<V> local, RedisLoadProtocol<V> redis, CacheEvictions evictions,
			StaleIfError<V> staleIfError, LoaderGuard loaderGuard, Ticker ticker, FreshnessGate gate,
			TieredCacheMetrics.ForCache metrics) {
	}

}
