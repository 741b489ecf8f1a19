package dev.concertcache.tiered.support;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheWarmup;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;
import dev.concertcache.tiered.redis.RedisTier;

/**
 * The warm-ups of one manager, one open at a time, and the twins of its caches that the threads inside it use
 * (ADR 0202). The twins run over keys of their own and meters nobody scrapes; they share the Redis connection,
 * both circuit breakers and the loader guard with the real caches, so a warm-up runs exactly the code a real read
 * runs.
 */
final class Warmups {

	private static final Log logger = LogFactory.getLog(Warmups.class);

	/** The warm-up the current thread is in, if any (of any manager: {@link #twin} checks whose). */
	private static final ThreadLocal<Warmup> current = new ThreadLocal<>();

	private final RedisTier redis;

	private final String instanceId;

	private final AtomicReference<@Nullable Warmup> open = new AtomicReference<>();

	Warmups(RedisTier redis, String instanceId) {
		this.redis = redis;
		this.instanceId = instanceId;
	}

	TieredCacheWarmup open() {
		Warmup opened = new Warmup();
		Assert.state(this.open.compareAndSet(null, opened), "A warm-up is open already");
		return opened;
	}

	/**
	 * The twin of cache {@code name} in the warm-up the calling thread is in, made by {@code factory} over the
	 * warm-up's Redis keys and meters; {@code null} outside an open warm-up of this manager.
	 */
	@SuppressWarnings("unchecked")
	<K, V> @Nullable TieredCache<K, V> twin(String name,
			BiFunction<RedisTier, TieredCacheMetrics, TieredCache<K, V>> factory) {
		Warmup warmup = current.get();
		if (warmup == null || warmup != this.open.get()) {
			return null;
		}
		RedisTier redis = warmup.redis;
		TieredCacheMetrics metrics = warmup.metrics;
		return (TieredCache<K, V>) warmup.twins.computeIfAbsent(name, (key) -> factory.apply(redis, metrics));
	}

	private final class Warmup implements TieredCacheWarmup {

		/** Meters nobody reads; new with each set of twins, which register theirs again. */
		private volatile TieredCacheMetrics metrics = new TieredCacheMetrics(new SimpleMeterRegistry());

		/** Every key of the warm-up is under this prefix, deleted on close. */
		private final RedisTier base = Warmups.this.redis.child("warmup:" + Warmups.this.instanceId, this.metrics);

		private final AtomicLong rounds = new AtomicLong();

		/** The keys of the twins since the last {@link #cool(boolean) cool(true)}. */
		private volatile RedisTier redis = this.base.child("0", this.metrics);

		private volatile ConcurrentMap<String, TieredCache<?, ?>> twins = new ConcurrentHashMap<>();

		@Override
		public synchronized void cool(boolean redisToo) {
			RedisTier previous = this.redis;
			this.metrics = new TieredCacheMetrics(new SimpleMeterRegistry());
			if (redisToo) {
				this.redis = this.base.child(String.valueOf(this.rounds.incrementAndGet()), this.metrics);
			}
			this.twins = new ConcurrentHashMap<>();
			if (redisToo) {
				try {
					previous.deleteAll();
				}
				catch (RuntimeException ex) {
					logger.debug("Could not delete a warm-up round's Redis keys; they go on close or by their TTL", ex);
				}
			}
		}

		@Override
		public Scope enter() {
			Warmup outer = current.get();
			current.set(this);
			return () -> {
				if (outer != null) {
					current.set(outer);
				}
				else {
					current.remove();
				}
			};
		}

		@Override
		public void close() {
			if (!Warmups.this.open.compareAndSet(this, null)) {
				return;
			}
			this.twins.clear();
			try {
				long deleted = this.base.deleteAll();
				logger.debug("Warm-up over; deleted its " + deleted + " Redis keys");
			}
			catch (RuntimeException ex) {
				logger.warn("Warm-up over, but its Redis keys could not be deleted; they expire by their TTL", ex);
			}
		}

	}

}
