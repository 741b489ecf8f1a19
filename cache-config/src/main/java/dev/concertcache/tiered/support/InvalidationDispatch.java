package dev.concertcache.tiered.support;

import java.time.Clock;
import java.util.Map;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import dev.concertcache.tiered.gate.PendingEvictions;
import dev.concertcache.tiered.log.InvalidationStream;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;

/**
 * Applies each message of the invalidation stream to the cache it names: another instance's eviction or evict-all,
 * a generation moved after a failover, or this instance's own evict-all heard back (its generation, L1 kept).
 */
final class InvalidationDispatch {

	private final Function<String, @Nullable DefaultTieredCache<?, ?>> caches;

	private final String instanceId;

	private final TieredCacheMetrics metrics;

	private final Clock clock;

	InvalidationDispatch(Function<String, @Nullable DefaultTieredCache<?, ?>> caches, String instanceId,
			TieredCacheMetrics metrics, Clock clock) {
		this.caches = caches;
		this.instanceId = instanceId;
		this.metrics = metrics;
		this.clock = clock;
	}

	void onMessage(Map<String, String> message) {
		String cacheName = message.get("cache");
		String key = message.get("key");
		long generation = Long.parseLong(message.getOrDefault("gen", "0"));
		DefaultTieredCache<?, ?> cache = (cacheName != null) ? this.caches.apply(cacheName) : null;
		if (this.instanceId.equals(message.get("origin"))) {
			if (cache != null && PendingEvictions.ALL.equals(key)) {
				cache.evictions().advanceGeneration(generation);
			}
			return;
		}
		String sent = message.get("sent");
		if (sent != null) {
			this.metrics.lag(this.clock.millis() - Long.parseLong(sent));
		}
		if (cache != null && PendingEvictions.ALL.equals(key)
				&& InvalidationStream.REDIS_ONLY.equals(message.get(InvalidationStream.SCOPE))) {
			cache.evictions().onGenerationMoved(generation);
		}
		else if (cache != null && key != null) {
			cache.evictions().onInvalidation(key, generation);
		}
	}

}
