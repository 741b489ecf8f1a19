package dev.concertcache.tiered.hotset;

import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.HotSetFill;
import dev.concertcache.tiered.TieredCacheMode;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;
import dev.concertcache.tiered.redis.RedisTier;
import dev.concertcache.tiered.redis.RedisUnavailableException;

/**
 * The fleet's hot set (mode TIERED): every {@code publish-interval} this instance publishes the keys of each cache's
 * hottest L1 entries to Redis, and an instance that joins fills its L1 from what the others published, before it
 * takes requests (ADR 0202).
 */
public final class HotSetExchange {

	private static final Log logger = LogFactory.getLog(HotSetExchange.class);

	private final boolean enabled;

	private final HotSetConfiguration hotSet;

	private final Supplier<? extends Collection<? extends HotSetMember>> caches;

	private final RedisTier redis;

	private final TieredCacheMetrics metrics;

	private final Clock clock;

	private volatile @Nullable ScheduledExecutorService publisher;

	public HotSetExchange(TieredCacheMode mode, HotSetConfiguration hotSet,
			Supplier<? extends Collection<? extends HotSetMember>> caches,
			RedisTier redis, TieredCacheMetrics metrics, Clock clock) {
		this.enabled = mode == TieredCacheMode.TIERED && hotSet.enabled();
		this.hotSet = hotSet;
		this.caches = caches;
		this.redis = redis;
		this.metrics = metrics;
		this.clock = clock;
	}

	/** Publishes every {@code publish-interval}, on a thread of its own: a slow publish holds back nothing else. */
	public void start() {
		if (!this.enabled) {
			return;
		}
		ScheduledExecutorService publisher = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "tiered-cache-hot-set");
			thread.setDaemon(true);
			return thread;
		});
		long every = this.hotSet.publishInterval().toMillis();
		publisher.scheduleWithFixedDelay(this::publish, every, every, TimeUnit.MILLISECONDS);
		this.publisher = publisher;
	}

	public void stop() {
		ScheduledExecutorService publisher = this.publisher;
		if (publisher != null) {
			publisher.shutdownNow();
		}
	}

	/**
	 * Reads the hot set of every cache created so far, then fills their L1 in batches of
	 * {@value HotSetConfiguration#FILL_BATCH} keys (one MGET each), the caches in turn, on a thread of its own: at
	 * the fill timeout this returns whatever a Redis that does not answer is doing, and the thread stops after its
	 * current command (the Redis command timeout). A reservation it leaves in L1 meanwhile makes a reader wait for
	 * that command at most, then read as usual.
	 */
	public HotSetFill fill() {
		if (!this.enabled) {
			return HotSetFill.NONE;
		}
		long started = System.nanoTime();
		HotSetFiller filler = new HotSetFiller();
		Thread thread = new Thread(filler, "tiered-cache-hot-set-fill");
		thread.setDaemon(true);
		thread.start();
		try {
			thread.join(Math.max(1, this.hotSet.fillTimeout().toMillis()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		filler.stopped = true;
		long took = System.nanoTime() - started;
		boolean complete = filler.complete;
		this.metrics.hotSetFill(took, complete);
		HotSetFill fill = new HotSetFill(filler.published, filler.filled.get(), Duration.ofNanos(took), complete);
		logger.info("Filled L1 from the hot set: " + fill.filled() + " of " + fill.published() + " keys in "
				+ fill.took().toMillis() + " ms" + (complete ? "" : " (stopped early: fill timeout or Redis failure)"));
		return fill;
	}

	/**
	 * Publishes the keys of every cache's hottest L1 entries into its hot set; scheduled every
	 * {@code publish-interval}, and callable by tests.
	 */
	public void publish() {
		long ttl = this.hotSet.publishInterval().toMillis() * HotSetConfiguration.TTL_INTERVALS;
		for (HotSetMember cache : this.caches.get()) {
			List<String> hottest = cache.hottest(this.hotSet.size());
			if (hottest.isEmpty()) {
				continue;
			}
			try {
				this.redis.hotSets().publishHot(cache.name(), hottest, this.hotSet.size(), ttl, this.clock.millis());
			}
			catch (RedisUnavailableException ex) {
				// The next publish tries again; a joining instance meanwhile reads the previous one.
				return;
			}
		}
	}

	/** One fill: the hot keys of every cache, then their values in batches, the caches in turn, until stopped. */
	private final class HotSetFiller implements Runnable {

		volatile boolean stopped;

		volatile boolean complete;

		volatile int published;

		public final AtomicInteger filled = new AtomicInteger();

		@Override
		public void run() {
			try {
				int size = HotSetExchange.this.hotSet.size();
				Map<HotSetMember, List<String>> hot = new LinkedHashMap<>();
				for (HotSetMember cache : HotSetExchange.this.caches.get()) {
					if (this.stopped) {
						return;
					}
					List<String> keys = HotSetExchange.this.redis.hotSets().hotKeys(cache.name(), size);
					hot.put(cache, keys);
					this.published += keys.size();
				}
				int batch = HotSetConfiguration.FILL_BATCH;
				int most = hot.values().stream().mapToInt(List::size).max().orElse(0);
				for (int from = 0; from < most; from += batch) {
					for (Map.Entry<HotSetMember, List<String>> cache : hot.entrySet()) {
						List<String> keys = cache.getValue();
						if (this.stopped) {
							return;
						}
						if (keys.size() > from) {
							int filled = cache.getKey().fill(keys.subList(from, Math.min(keys.size(), from + batch)));
							this.filled.addAndGet(filled);
							HotSetExchange.this.metrics.hotSetFilled(cache.getKey().name(), filled);
						}
					}
				}
				this.complete = !this.stopped;
			}
			catch (RedisUnavailableException ex) {
				logger.warn("Hot-set fill stopped, Redis is not available: " + ex.getMessage());
			}
			catch (RuntimeException ex) {
				logger.warn("Hot-set fill failed", ex);
			}
		}

	}

}
