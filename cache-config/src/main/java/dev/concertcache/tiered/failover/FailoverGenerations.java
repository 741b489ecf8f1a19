package dev.concertcache.tiered.failover;

import java.time.Clock;
import java.util.Collection;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.function.LongFunction;
import java.util.function.ToLongFunction;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.eviction.CacheEvictions;
import dev.concertcache.tiered.gate.FreshnessGate;
import dev.concertcache.tiered.gate.PendingEvictions;
import dev.concertcache.tiered.log.InvalidationListener;
import dev.concertcache.tiered.log.InvalidationStream;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;
import dev.concertcache.tiered.redis.RedisTier;

/**
 * What every cache does when another Redis server takes over (ADR 0039): a promoted replica may lack the last
 * tombstones and generation moves, so each cache moves to a new generation, once per failover across the fleet, and
 * L1 is cleared where lost announcements could have reached it. On a cluster it follows {@link ClusterFailovers};
 * on a standalone or Sentinel client the invalidation listener reports a new {@code run_id}.
 */
public final class FailoverGenerations {

	private static final Log logger = LogFactory.getLog(FailoverGenerations.class);

	private final Supplier<? extends Collection<CacheEvictions>> caches;

	private final RedisTier redis;

	private final InvalidationStream stream;

	private final FreshnessGate gate;

	private final Supplier<@Nullable InvalidationListener> listener;

	private final String instanceId;

	private final Clock clock;

	private final TieredCacheMetrics metrics;

	private final AtomicLong failoverEpoch = new AtomicLong(-1);

	/** How the last failover moved a generation; a move Redis did not take is retried with it. */
	private volatile ToLongFunction<String> failoverMove = (cache) -> {
		throw new IllegalStateException("No failover to retry");
	};

	private volatile @Nullable ClusterFailovers failovers;

	private volatile @Nullable ExecutorService moves;

	public FailoverGenerations(Supplier<? extends Collection<CacheEvictions>> caches, RedisTier redis,
			InvalidationStream stream, FreshnessGate gate, Supplier<@Nullable InvalidationListener> listener,
			String instanceId, Clock clock, TieredCacheMetrics metrics) {
		this.caches = caches;
		this.redis = redis;
		this.stream = stream;
		this.gate = gate;
		this.listener = listener;
		this.instanceId = instanceId;
		this.clock = clock;
		this.metrics = metrics;
	}

	/**
	 * Follows the cluster's topology: reads stop using Redis before Lettuce routes by the new topology
	 * ({@link ClusterFailovers}); the generations move off it (Redis round trips) on a thread of their own, not behind a
	 * retry of pending evictions.
	 */
	public void follow(RedisClusterClient cluster) {
		ExecutorService moves = Executors.newSingleThreadExecutor((task) -> {
			Thread thread = new Thread(task, "tiered-cache-failover");
			thread.setDaemon(true);
			return thread;
		});
		this.moves = moves;
		int streamSlot = SlotHash.getSlot(this.stream.name());
		ClusterFailovers failovers = new ClusterFailovers(cluster, (epoch, slots) -> {
			long seen = this.gate.server().disconnected();
			boolean streamMoved = slots.get(streamSlot);
			moves.execute(() -> {
				try {
					afterFailover(epoch, streamMoved);
				}
				finally {
					// A cache whose move failed is pending: its reads skip Redis on their own.
					this.gate.server().confirmed(seen);
				}
			});
		});
		this.failovers = failovers;
		failovers.start();
	}

	public void stop() {
		ClusterFailovers failovers = this.failovers;
		if (failovers != null) {
			failovers.stop();
		}
		ExecutorService moves = this.moves;
		if (moves != null) {
			moves.shutdownNow();
		}
	}

	public void flush(String reason) {
		logger.info("Flushing L1 of every cache: " + reason);
		this.redis.forgetRegistrations();
		this.caches.get().forEach(CacheEvictions::flush);
	}

	/**
	 * After a primary of the cluster changed (config epoch {@code epoch}): every cache moves to a new generation, once
	 * per epoch across the fleet; L1 is kept unless the stream's own slot moved ({@code streamMoved}), whose new
	 * primary may lack its last announcements (ADR 0039, "Failover rule"). A cache whose move Redis does not take yet
	 * is pending until it lands.
	 */
	private void afterFailover(long epoch, boolean streamMoved) {
		if (streamMoved) {
			// Whatever the epoch: two failovers at once may be reported once, under the higher epoch.
			streamServerChanged("the invalidation stream's slot has another primary, which may lack its last "
					+ "announcements");
			InvalidationListener listener = this.listener.get();
			if (listener != null) {
				listener.serverMayHaveChanged();
			}
		}
		if (this.failoverEpoch.getAndAccumulate(epoch, Math::max) >= epoch) {
			return;
		}
		logger.warn("Redis Cluster failed over (config epoch " + epoch + "): moving every cache to a new generation");
		moveEveryGeneration((cache) -> announced(cache, (now) -> this.redis.evictAllAfterFailover(cache, epoch, now),
				InvalidationStream.REDIS_ONLY), false);
	}

	/**
	 * After the invalidation listener found another server ({@code run_id} {@code runId}) behind a standalone
	 * connection, a Sentinel's promoted replica or a restart: every cache moves to a new generation, once per primary
	 * across the fleet (ADR 0039, "Redis Sentinel"); announced for Redis only where a change feed keeps L1.
	 */
	public void afterNewPrimary(String runId) {
		streamServerChanged("another Redis server (run_id " + runId + ")");
		logger.warn("Another Redis primary (run_id " + runId + "): moving every cache to a new generation");
		boolean keepL1 = this.gate.followsFeed();
		moveEveryGeneration((cache) -> announced(cache, (now) -> this.redis.evictAllForNewPrimary(cache, runId, now),
				keepL1 ? InvalidationStream.REDIS_ONLY : null), !keepL1);
	}

	/**
	 * Another server holds the invalidation stream, which may lack announcements this instance never read: L1 is
	 * cleared, unless a change feed is followed, whose checkpoint has it invalidate them again (ADR 0039, "The
	 * reader's checkpoint").
	 */
	public void streamServerChanged(String reason) {
		if (this.gate.followsFeed()) {
			logger.info("Keeping L1 until the change feed confirms again: " + reason);
		}
		else {
			flush(reason);
		}
	}

	/**
	 * Moves {@code cache} with {@code move} (given the time now) and announces the move if this instance made it
	 * (the fleet's first); returns the cache's generation.
	 * @param scope what the announcement makes stale, {@code null} for both tiers
	 */
	private long announced(String cache, LongFunction<RedisTier.GenerationMove> move, @Nullable String scope) {
		long now = this.clock.millis();
		RedisTier.GenerationMove moved = move.apply(now);
		if (moved.moved()) {
			this.stream.announce(cache, PendingEvictions.ALL, moved.generation(), this.instanceId, now, scope);
		}
		return moved.generation();
	}

	/**
	 * Moves every cache to the generation {@code move} returns for its name, clearing its L1 if {@code clearL1}. A
	 * cache whose move Redis does not take is pending until a retry moves it: as an evict-all if {@code clearL1}, else
	 * as the same move, which keeps every instance's L1.
	 */
	private void moveEveryGeneration(ToLongFunction<String> move, boolean clearL1) {
		this.redis.forgetRegistrations();
		this.failoverMove = move;
		for (CacheEvictions cache : this.caches.get()) {
			try {
				long generation = move.applyAsLong(cache.name());
				if (clearL1) {
					cache.onInvalidation(PendingEvictions.ALL, generation);
				}
				else {
					cache.advanceGeneration(generation);
				}
			}
			catch (RuntimeException ex) {
				if (clearL1) {
					this.gate.pending().add(cache.name(), PendingEvictions.ALL);
					cache.flush();
				}
				else {
					this.gate.pending().add(cache.name(), PendingEvictions.GENERATION);
				}
			}
		}
		this.metrics.failoverHandled();
	}

	/** A node answered MOVED: the slot moved (a failover, a resharding) and this instance's topology is behind. */
	public void onMoved() {
		ClusterFailovers failovers = this.failovers;
		if (failovers != null) {
			failovers.refresh();
		}
	}

	/** Moves {@code cache}'s generation again as the last failover did; whether Redis took it. */
	public boolean retryMove(CacheEvictions cache) {
		try {
			cache.advanceGeneration(this.failoverMove.applyAsLong(cache.name()));
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

}
