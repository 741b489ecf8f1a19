package dev.concertcache.tiered.eviction;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.gate.PendingEvictions.Eviction;
import dev.concertcache.tiered.gate.PendingEvictions;

/**
 * Sends again, every {@code retry-interval}, the evictions Redis did not take (ADR 0014): until one lands, this
 * instance's reads of its key skip Redis.
 */
public final class PendingEvictionRetry {

	private static final Log logger = LogFactory.getLog(PendingEvictionRetry.class);

	private final PendingEvictions pending;

	private final Supplier<? extends Collection<CacheEvictions>> caches;

	private final Function<String, @Nullable CacheEvictions> cache;

	/** Moves a cache's generation again as the last failover did; whether Redis took it. */
	private final Predicate<CacheEvictions> retryMove;

	private final Duration interval;

	private volatile @Nullable ScheduledExecutorService retries;

	public PendingEvictionRetry(PendingEvictions pending, Supplier<? extends Collection<CacheEvictions>> caches,
			Function<String, @Nullable CacheEvictions> cache, Predicate<CacheEvictions> retryMove, Duration interval) {
		this.pending = pending;
		this.caches = caches;
		this.cache = cache;
		this.retryMove = retryMove;
		this.interval = interval;
	}

	public void start() {
		ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "tiered-cache-retry");
			thread.setDaemon(true);
			return thread;
		});
		long every = this.interval.toMillis();
		retries.scheduleWithFixedDelay(this::retry, every, every, TimeUnit.MILLISECONDS);
		this.retries = retries;
	}

	public void stop() {
		ScheduledExecutorService retries = this.retries;
		if (retries != null) {
			retries.shutdownNow();
		}
	}

	public void retry() {
		try {
			// Not gated by the Redis breaker, as evictions are not: the first one Redis does not take ends the pass.
			if (this.pending.isEmpty()) {
				return;
			}
			if (this.pending.overflowed()) {
				this.pending.overflowDone();
				for (CacheEvictions cache : this.caches.get()) {
					if (!cache.evictAllNow()) {
						return;
					}
				}
			}
			for (Map.Entry<Eviction, Long> request : this.pending.snapshot()) {
				Eviction eviction = request.getKey();
				CacheEvictions cache = this.cache.apply(eviction.cache());
				if (cache == null) {
					this.pending.done(eviction, request.getValue());
					continue;
				}
				// Runs the whole eviction again, L1 included: a read between Redis' return and this replay
				// may have put the old L2 value back into this instance's L1. Forgotten only once Redis took it:
				// until then this instance's reads of the key do not use Redis.
				boolean taken = switch (eviction.key()) {
					case PendingEvictions.ALL -> cache.evictAllNow();
					case PendingEvictions.GENERATION -> this.retryMove.test(cache);
					default -> cache.evictNow(eviction.key());
				};
				if (!taken) {
					return;
				}
				this.pending.done(eviction, request.getValue());
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Retry of pending evictions failed", ex);
		}
	}

}
