package dev.concertcache.tiered.support;

import java.net.ConnectException;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.util.Assert;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCacheWarmup;
import dev.concertcache.tiered.gate.ChangeFeedWatermark;
import dev.concertcache.tiered.gate.InvalidationWatermark;
import dev.concertcache.tiered.loader.LoaderGuard;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;
import dev.concertcache.tiered.redis.RedisTier;

/**
 * The warm-ups of one manager, one open at a time, and the twins of its caches that the threads inside it use
 * (ADR 0202). The twins run over keys of their own ({@code <key-prefix>:warmup:<instance-id>:}) and meters nobody
 * scrapes; they share the Redis connection and its circuit breaker with the real caches, so a warm-up runs exactly
 * the code a real read runs. Their loader guards and their change feed are the warm-up's own: a rehearsed outage
 * opens their breakers and stalls their feed, not the real ones.
 */
final class Warmups {

	private static final Log logger = LogFactory.getLog(Warmups.class);

	/** The warm-up the current thread is in, if any (of any manager: {@link #twin} checks whose). */
	private static final ThreadLocal<Warmup> current = new ThreadLocal<>();

	/** What a rehearsed outage's loads fail with: what a pool reports for a database that refuses connections. */
	private static final Supplier<Optional<Object>> UNREACHABLE = () -> {
		throw new DataAccessResourceFailureException("Rehearsed outage: the database cannot be reached",
				new ConnectException("Connection refused (rehearsed)"));
	};

	private final RedisTier redis;

	private final String instanceId;

	private final InvalidationWatermark watermark;

	private final ChangeFeedWatermark feed;

	private final Function<String, LoaderGuard> loaderGuards;

	private final AtomicReference<@Nullable Warmup> open = new AtomicReference<>();

	/**
	 * @param feed the real caches' change feed, whose confirmations the twins' own feed follows outside a rehearsed
	 * outage
	 * @param loaderGuards a new loader guard for the twin of the named cache, configured as the real one
	 */
	Warmups(RedisTier redis, String instanceId, InvalidationWatermark watermark, ChangeFeedWatermark feed,
			Function<String, LoaderGuard> loaderGuards) {
		this.redis = redis;
		this.instanceId = instanceId;
		this.watermark = watermark;
		this.feed = feed;
		this.loaderGuards = loaderGuards;
	}

	TieredCacheWarmup open() {
		Warmup opened = new Warmup();
		Assert.state(this.open.compareAndSet(null, opened), "A warm-up is open already");
		return opened;
	}

	/**
	 * The twin of cache {@code name} in the warm-up the calling thread is in, made by {@code factory} from the
	 * warm-up's parts; {@code null} outside an open warm-up of this manager.
	 */
	@SuppressWarnings("unchecked")
	<K, V> @Nullable TieredCache<K, V> twin(String name, Function<TwinParts, TieredCache<K, V>> factory) {
		Warmup warmup = current.get();
		if (warmup == null || warmup != this.open.get()) {
			return null;
		}
		return (TieredCache<K, V>) warmup.twins.computeIfAbsent(name,
				(key) -> new RehearsingTwin<>(factory.apply(new TwinParts(warmup.redis, warmup.metrics, warmup.feed,
						warmup.loaderGuards.computeIfAbsent(name, this.loaderGuards))), warmup));
	}

	/** What a twin is made of: the warm-up's Redis keys, meters, change feed and the twin's loader guard. */
	record TwinParts(RedisTier redis, TieredCacheMetrics metrics, ChangeFeedWatermark feed, LoaderGuard loaderGuard) {
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

		/** Kept across coolings: a breaker a rehearsed outage opened recovers as a real one does. */
		private final ConcurrentMap<String, LoaderGuard> loaderGuards = new ConcurrentHashMap<>();

		private final ChangeFeedWatermark feed = Warmups.this.feed.isFollowed()
				? ChangeFeedWatermark.of(Warmups.this.watermark::now, Warmups.this.feed.maxLag())
				: ChangeFeedWatermark.notFollowed();

		private volatile boolean rehearsingOutage;

		@Override
		public void rehearseOutage() {
			this.rehearsingOutage = true;
		}

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
			if (!this.rehearsingOutage && Warmups.this.feed.coversRedis()) {
				// As far as the real feed is confirmed; in a rehearsed outage not at all, as a real outage's.
				this.feed.confirmedUntil(Warmups.this.watermark.now());
			}
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

	/** A twin whose loads fail as against an unreachable database while its warm-up rehearses an outage. */
	private static final class RehearsingTwin<K, V> implements TieredCache<K, V> {

		private final TieredCache<K, V> twin;

		private final Warmup warmup;

		RehearsingTwin(TieredCache<K, V> twin, Warmup warmup) {
			this.twin = twin;
			this.warmup = warmup;
		}

		@Override
		public String name() {
			return this.twin.name();
		}

		@Override
		@SuppressWarnings({ "unchecked", "rawtypes" })
		public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
			return this.twin.lookup(key, this.warmup.rehearsingOutage ? (Supplier) UNREACHABLE : loader);
		}

		@Override
		public void evict(K key) {
			this.twin.evict(key);
		}

		@Override
		public void evictAll() {
			this.twin.evictAll();
		}

		@Override
		public void invalidate(K key) {
			this.twin.invalidate(key);
		}

		@Override
		public void invalidateAll() {
			this.twin.invalidateAll();
		}

	}

}
