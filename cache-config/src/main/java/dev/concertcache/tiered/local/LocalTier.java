package dev.concertcache.tiered.local;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.gate.FreshnessGate;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;

/**
 * The in-process side of one cache: the single flight of concurrent misses of one key on this instance (ADR 0011),
 * and in mode TIERED the values themselves (Caffeine). The first reader of a missing key puts an incomplete future
 * in and loads on its own thread, the others wait for that future. An invalidation that arrives meanwhile removes
 * the future, so its value is returned to the readers that were waiting for it but never kept.
 *
 * @param <V> the value type
 */
public abstract sealed class LocalTier<V> permits LocalTier.InCaffeine, LocalTier.InFlightOnly {

	final String cache;

	private final Duration lockTtl;

	final TieredCacheMetrics.ForCache metrics;

	private LocalTier(String cache, Duration lockTtl, TieredCacheMetrics.ForCache metrics) {
		this.cache = cache;
		this.lockTtl = lockTtl;
		this.metrics = metrics;
	}

	/** Mode TIERED: values in Caffeine, fresh for the L1 time to live, kept longer only to be served stale. */
	public static <V> LocalTier<V> caffeine(String cache, Duration lockTtl, TieredCacheMetrics.ForCache metrics,
			long maximumSize, Ticker ticker, FreshnessGate gate, Executor refresher) {
		return new InCaffeine<>(cache, lockTtl, metrics, maximumSize, ticker, gate, refresher);
	}

	/** Mode REDIS: nothing kept, concurrent reads of one key share one trip to Redis (and the loader). */
	public static <V> LocalTier<V> inFlightOnly(String cache, Duration lockTtl, TieredCacheMetrics.ForCache metrics) {
		return new InFlightOnly<>(cache, lockTtl, metrics);
	}

	/** Reads {@code key} (encoded), calling {@code loads} unless a value or another reader's load is here. */
	public abstract Lookup<V> read(String key, Supplier<Optional<V>> loader, Loads<V> loads);

	/**
	 * What {@link #read} returns for {@code key} without waiting for anything (Redis, the loader, another reader's
	 * load): a fresh value L1 may serve, or {@code null}. {@code loader} is only called on another thread, to refresh
	 * the value ahead of its expiry. None in mode REDIS.
	 */
	public @Nullable Lookup<V> readInMemory(String key, Supplier<Optional<V>> loader, Loads<V> loads) {
		return null;
	}

	/** Drops {@code key}: a read that starts after this must not join a load that started before it. */
	public abstract void invalidate(String key, String cause);

	public abstract void invalidateAll(String cause);

	/**
	 * The keys of the {@code n} hottest fresh entries, hottest first (Caffeine's frequency sketch); none in mode
	 * REDIS.
	 */
	public List<String> hottest(int n) {
		return List.of();
	}

	/**
	 * Reserves {@code key} for a fill from the hot set: a future in L1 that an invalidation removes as it removes a
	 * load in flight, so that a value read before the invalidation is never kept. {@code null} if L1 holds the key
	 * already (or in mode REDIS).
	 */
	public @Nullable CompletableFuture<L1Entry<V>> reserve(String key) {
		return null;
	}

	/**
	 * Ends a fill's reservation: keeps {@code entry} if the reservation is still in L1, else (or with {@code null},
	 * nothing to fill) removes it; a reader that joined it meanwhile reads again.
	 * @return whether the entry was kept
	 */
	public boolean fill(String key, CompletableFuture<L1Entry<V>> reserved, @Nullable L1Entry<V> entry) {
		return false;
	}

	/**
	 * Shares the outcome of another reader's load, waiting at most the lock time, as a reader on another instance
	 * would: a load that hangs past it is not waited for, this reader loads on its own (without touching L1).
	 */
	final Lookup<V> awaitLoad(CompletableFuture<L1Entry<V>> found, String key, Supplier<Optional<V>> loader,
			Loads<V> loads) {
		try {
			return found.get(this.lockTtl.toNanos(), TimeUnit.NANOSECONDS).fromL1;
		}
		catch (TimeoutException ex) {
			this.metrics.error("await");
			return loads.load(key, loader, null).lookup;
		}
		catch (ExecutionException | CancellationException ex) {
			if (ex.getCause() instanceof NothingToFill) {
				// A fill's reservation that Redis had no fresh value for: read as if it had never been there.
				return read(key, loader, loads);
			}
			return join(found).fromL1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for a load of cache '" + this.cache + "'", ex);
		}
	}

	/** Completes {@code mine} (which other readers may be waiting for) with what Redis or the loader gives. */
	final Lookup<V> load(String key, Supplier<Optional<V>> loader, @Nullable L1Entry<V> staleInL1,
			CompletableFuture<L1Entry<V>> mine, Loads<V> loads) {
		try {
			mine.complete(loads.load(key, loader, staleInL1));
		}
		catch (Throwable ex) {
			// Removed from L1 like any failed future, without Caffeine logging every loader failure.
			mine.completeExceptionally(new LoadFailure(ex));
		}
		finally {
			loaded(key, mine);
		}
		return join(mine).lookup;
	}

	void loaded(String key, CompletableFuture<L1Entry<V>> mine) {
	}

	private static <T> T join(CompletableFuture<T> future) {
		try {
			return future.join();
		}
		catch (CompletionException | CancellationException ex) {
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

	/** A load in flight that replaced {@code previous}, an entry past its freshness or refused by the gate. */
	private static final class Reload<V> extends CompletableFuture<L1Entry<V>> {

		final L1Entry<V> previous;

		Reload(L1Entry<V> previous) {
			this.previous = previous;
		}

	}

	/** Completes a fill's reservation that is not kept: its readers read again. */
	private static final class NothingToFill extends CancellationException {

	}

	/**
	 * A loader's failure as its future carries it: a cancellation, which Caffeine drops without a warning (the
	 * caller gets the loader's own exception and decides what to log).
	 */
	private static final class LoadFailure extends CancellationException {

		LoadFailure(Throwable cause) {
			initCause(cause);
		}

	}

	static final class InCaffeine<V> extends LocalTier<V> {

		private final AsyncCache<String, L1Entry<V>> l1;

		private final Ticker ticker;

		private final FreshnessGate gate;

		private final Executor refresher;

		private InCaffeine(String cache, Duration lockTtl, TieredCacheMetrics.ForCache metrics, long maximumSize,
				Ticker ticker, FreshnessGate gate, Executor refresher) {
			super(cache, lockTtl, metrics);
			this.ticker = ticker;
			this.gate = gate;
			this.refresher = refresher;
			this.l1 = Caffeine.newBuilder()
				.maximumSize(maximumSize)
				.expireAfter(L1Entry.<V>expiry(ticker))
				.ticker(ticker)
				.executor(Runnable::run)
				.evictionListener((String key, L1Entry<V> value, RemovalCause cause) -> metrics.eviction("l1",
						(cause == RemovalCause.SIZE) ? "size" : "expired"))
				.buildAsync();
			metrics.l1Size(this.l1, (l1) -> l1.synchronous().estimatedSize());
		}

		/**
		 * A fresh entry or a load in flight is a hit; a missing entry, or one past its fresh-until time, is a miss
		 * whose reader puts its own future in and loads.
		 */
		@Override
		public Lookup<V> read(String key, Supplier<Optional<V>> loader, Loads<V> loads) {
			while (true) {
				CompletableFuture<L1Entry<V>> found = this.l1.getIfPresent(key);
				if (found == null) {
					CompletableFuture<L1Entry<V>> mine = new CompletableFuture<>();
					found = this.l1.get(key, (k, executor) -> mine);
					if (found == mine) {
						this.metrics.l1Miss.increment();
						return load(key, loader, null, mine, loads);
					}
				}
				if (!found.isDone() || found.isCompletedExceptionally()) {
					// A load in flight (or one just failed): share its outcome, unless the loader is out of reach.
					L1Entry<V> instead = (found instanceof Reload<V> r) ? loads.whileUnreachable(key, r.previous) : null;
					this.metrics.l1Hit.increment();
					return (instead != null) ? instead.fromL1 : awaitLoad(found, key, loader, loads);
				}
				L1Entry<V> entry = found.join();
				Lookup<V> hit = hit(key, found, entry, loader, loads);
				if (hit != null) {
					return hit;
				}
				L1Entry<V> again = entry.stale ? loads.againWhileUnreachable(key, entry) : null;
				if (again != null) {
					this.metrics.l1Hit.increment();
					return again.fromL1;
				}
				// Expired, or older than what this instance has heard invalidations up to (kept only to be served
				// if the load fails): refresh it, unless another reader got there first.
				CompletableFuture<L1Entry<V>> mine = new Reload<>(entry);
				if (this.l1.asMap().replace(key, found, mine)) {
					this.metrics.l1Miss.increment();
					return load(key, loader, entry, mine, loads);
				}
			}
		}

		@Override
		public @Nullable Lookup<V> readInMemory(String key, Supplier<Optional<V>> loader, Loads<V> loads) {
			CompletableFuture<L1Entry<V>> found = this.l1.getIfPresent(key);
			return (found != null && found.isDone() && !found.isCompletedExceptionally())
					? hit(key, found, found.join(), loader, loads) : null;
		}

		/**
		 * {@code found}'s entry if it is fresh and the gate lets L1 serve it, refreshed ahead when that is due; else
		 * null.
		 */
		private @Nullable Lookup<V> hit(String key, CompletableFuture<L1Entry<V>> found, L1Entry<V> entry,
				Supplier<Optional<V>> loader, Loads<V> loads) {
			long now = this.ticker.read();
			if (!entry.isFreshAt(now)
					|| !this.gate.servesFromL1(this.cache, key, entry.readAt, entry.databaseReadAt)) {
				return null;
			}
			this.metrics.l1Hit.increment();
			if (entry.claimRefreshAt(now)) {
				refreshAhead(key, found, entry, loader, loads);
			}
			return entry.fromL1;
		}

		/**
		 * Reads {@code key} again in the background (ADR 0204); a fresh result replaces {@code found} only while L1
		 * still holds it, so that a value read before an eviction since is dropped.
		 */
		private void refreshAhead(String key, CompletableFuture<L1Entry<V>> found, L1Entry<V> entry,
				Supplier<Optional<V>> loader, Loads<V> loads) {
			try {
				this.refresher.execute(() -> {
					try {
						L1Entry<V> refreshed = loads.refresh(key, loader, entry);
						if (!refreshed.stale) {
							this.l1.asMap().replace(key, found, CompletableFuture.completedFuture(refreshed));
						}
					}
					catch (RuntimeException ex) {
						this.metrics.error("refresh");
					}
				});
			}
			catch (RejectedExecutionException ex) {
				// Busy: the entry expires and its next reader reads it.
			}
		}

		@Override
		public void invalidate(String key, String cause) {
			this.l1.synchronous().invalidate(key);
			this.metrics.eviction("l1", cause);
		}

		@Override
		public void invalidateAll(String cause) {
			this.l1.synchronous().invalidateAll();
			this.metrics.eviction("l1", cause);
		}

		@Override
		public List<String> hottest(int n) {
			long now = this.ticker.read();
			List<String> keys = new ArrayList<>(n);
			// Oversampled: entries kept only to be served stale, and loads in flight, are not published.
			this.l1.synchronous().policy().eviction().ifPresent((eviction) -> eviction.hottest(2 * n)
				.forEach((key, entry) -> {
					if (keys.size() < n && entry.isFreshAt(now)) {
						keys.add(key);
					}
				}));
			return keys;
		}

		@Override
		public @Nullable CompletableFuture<L1Entry<V>> reserve(String key) {
			CompletableFuture<L1Entry<V>> mine = new CompletableFuture<>();
			return (this.l1.asMap().putIfAbsent(key, mine) == null) ? mine : null;
		}

		@Override
		public boolean fill(String key, CompletableFuture<L1Entry<V>> reserved, @Nullable L1Entry<V> entry) {
			if (entry == null) {
				this.l1.asMap().remove(key, reserved);
				reserved.completeExceptionally(new NothingToFill());
				return false;
			}
			// Completed in place: if an invalidation removed the reservation meanwhile, the entry is not in L1.
			reserved.complete(entry);
			return this.l1.asMap().get(key) == reserved;
		}

	}

	static final class InFlightOnly<V> extends LocalTier<V> {

		private final ConcurrentMap<String, CompletableFuture<L1Entry<V>>> inFlight = new ConcurrentHashMap<>();

		private InFlightOnly(String cache, Duration lockTtl, TieredCacheMetrics.ForCache metrics) {
			super(cache, lockTtl, metrics);
		}

		@Override
		public Lookup<V> read(String key, Supplier<Optional<V>> loader, Loads<V> loads) {
			CompletableFuture<L1Entry<V>> mine = new CompletableFuture<>();
			CompletableFuture<L1Entry<V>> found = this.inFlight.putIfAbsent(key, mine);
			if (found != null) {
				this.metrics.l2Hit.increment();
				return awaitLoad(found, key, loader, loads);
			}
			return load(key, loader, null, mine, loads);
		}

		@Override
		void loaded(String key, CompletableFuture<L1Entry<V>> mine) {
			this.inFlight.remove(key, mine);
		}

		@Override
		public void invalidate(String key, String cause) {
			this.inFlight.remove(key);
		}

		@Override
		public void invalidateAll(String cause) {
			this.inFlight.clear();
		}

	}

}
