package dev.concertcache.tiered.support;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;

import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.eviction.PendingEvictionRetry;
import dev.concertcache.tiered.gate.FreshnessGate;
import dev.concertcache.tiered.gate.PendingEvictions;
import dev.concertcache.tiered.gate.ServerConfirmation;
import dev.concertcache.tiered.hotset.HotSetConfiguration;
import dev.concertcache.tiered.hotset.HotSetExchange;
import dev.concertcache.tiered.loader.LoaderGuard;
import dev.concertcache.tiered.log.InvalidationListener;
import dev.concertcache.tiered.redis.RedisTier;

import org.springframework.test.util.ReflectionTestUtils;

/**
 * The parts of a {@link DefaultTieredCacheManager} that tests drive or look at, read from its fields as Boot's tests
 * read a bean's, so that the manager carries no accessor for tests.
 */
final class ManagerInternals {

	private ManagerInternals() {
	}

	static InvalidationListener listener(DefaultTieredCacheManager manager) {
		return field(manager, "listener");
	}

	static PendingEvictionRetry retry(DefaultTieredCacheManager manager) {
		return field(manager, "retry");
	}

	static HotSetExchange hotSet(DefaultTieredCacheManager manager) {
		return field(manager, "hotSet");
	}

	/** The hot-set settings the manager was built with. */
	static HotSetConfiguration hotSetConfiguration(DefaultTieredCacheManager manager) {
		return (HotSetConfiguration) ReflectionTestUtils.getField(hotSet(manager), "hotSet");
	}

	static RedisTier redisTier(DefaultTieredCacheManager manager) {
		return field(manager, "redis");
	}

	/** This instance's identity in invalidation messages. */
	static String instanceId(DefaultTieredCacheManager manager) {
		return field(manager, "instanceId");
	}

	/** How long ago the manager last heard every invalidation, {@code null} if it never has. */
	static Duration invalidationSilence(DefaultTieredCacheManager manager) {
		return gate(manager).silence();
	}

	static Clock clock(DefaultTieredCacheManager manager) {
		return field(manager, "clock");
	}

	static PendingEvictions pending(DefaultTieredCacheManager manager) {
		return gate(manager).pending();
	}

	static ServerConfirmation serverConfirmation(DefaultTieredCacheManager manager) {
		return gate(manager).server();
	}

	/** The breaker around every Redis call. */
	static CircuitBreaker circuitBreaker(DefaultTieredCacheManager manager) {
		return (CircuitBreaker) ReflectionTestUtils.getField(redisTier(manager).calls(), "breaker");
	}

	/** The loader guard of cache {@code name}, shared by its warm-up twin. */
	static LoaderGuard loaderGuard(DefaultTieredCacheManager manager, String name) {
		return factory(manager).loaderGuard(name);
	}

	/** The bulkhead of the loader guard of cache {@code name}. */
	static Bulkhead loaderBulkhead(DefaultTieredCacheManager manager, String name) {
		return (Bulkhead) ReflectionTestUtils.getField(loaderGuard(manager, name), "bulkhead");
	}

	/** The configuration of cache {@code name}: its own, else the defaults. */
	static TieredCacheConfiguration spec(DefaultTieredCacheManager manager, String name) {
		return factory(manager).spec(name);
	}

	/** The cache itself, under its decorators. */
	@SuppressWarnings("unchecked")
	static <K, V> DefaultTieredCache<K, V> core(DefaultTieredCacheManager manager, String name) {
		Map<String, CacheFactory.Registered<?, ?>> caches = field(manager, "caches");
		return (DefaultTieredCache<K, V>) caches.get(name).core();
	}

	private static FreshnessGate gate(DefaultTieredCacheManager manager) {
		return field(manager, "gate");
	}

	private static CacheFactory factory(DefaultTieredCacheManager manager) {
		return field(manager, "factory");
	}

	@SuppressWarnings("unchecked")
	private static <T> T field(DefaultTieredCacheManager manager, String name) {
		return (T) ReflectionTestUtils.getField(manager, name);
	}

}
