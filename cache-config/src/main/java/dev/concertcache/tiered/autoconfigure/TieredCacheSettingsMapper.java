package dev.concertcache.tiered.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;

import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.hotset.HotSetConfiguration;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.support.TieredCacheManagerBuilder;
import dev.concertcache.tiered.autoconfigure.TieredCacheProperties.Bulkhead;
import dev.concertcache.tiered.autoconfigure.TieredCacheProperties.CacheSettings;
import dev.concertcache.tiered.autoconfigure.TieredCacheProperties.CircuitBreaker;

/**
 * Maps {@link TieredCacheProperties} onto the core's builder and settings. The breakers and bulkheads also honour
 * resilience4j's own keys, {@code resilience4j.circuitbreaker.instances.<name>.*} (with its {@code base-config} from
 * {@code resilience4j.circuitbreaker.configs.<base>.*}) and {@code resilience4j.bulkhead.instances.<name>.*}: for the
 * keys {@link CircuitBreaker} has and {@code max-concurrent-calls}/{@code max-wait-duration}, the user's instance
 * wins over its base config, which wins over {@code tiered-cache.*}, which wins over the core's defaults.
 */
final class TieredCacheSettingsMapper {

	private static final String BREAKERS = "resilience4j.circuitbreaker";

	private static final String BULKHEADS = "resilience4j.bulkhead";

	private static final String LOADER_PREFIX = DefaultTieredCacheManager.LOADER_GUARD_NAME + "-";

	private final TieredCacheProperties properties;

	private final Binder binder;

	TieredCacheSettingsMapper(TieredCacheProperties properties, Binder binder) {
		this.properties = properties;
		this.binder = binder;
	}

	void applyTo(TieredCacheManagerBuilder builder) {
		TieredCacheProperties properties = this.properties;
		PropertyMapper map = PropertyMapper.get();
		map.from(properties.mode()).to(builder::mode);
		map.from(properties.keyPrefix()).to(builder::keyPrefix);
		map.from(properties.instanceId()).to(builder::instanceId);
		TieredCacheProperties.Invalidation invalidation = properties.invalidation();
		map.from(invalidation.streamMaxLength()).to(builder::streamMaxLength);
		map.from(invalidation.blockTimeout()).to(builder::blockTimeout);
		map.from(invalidation.maxSilence()).to(builder::maxSilence);
		map.from(invalidation.disconnectMaxAge()).to(builder::disconnectMaxAge);
		map.from(invalidation.tombstoneTtl()).to(builder::tombstoneTtl);
		map.from(invalidation.pendingMaximumSize()).to(builder::pendingMaximumSize);
		map.from(invalidation.retryInterval()).to(builder::retryInterval);
		map.from(properties.lock().ttl()).to(builder::lockTtl);
		map.from(properties.lock().pollInterval()).to(builder::lockPollInterval);
		builder.hotSet(hotSet(properties.hotSet()));
		builder.redisCircuitBreaker(breaker(TieredCacheManagerBuilder.DEFAULT_REDIS_CIRCUIT_BREAKER,
				resilience4jBreaker(DefaultTieredCacheManager.CIRCUIT_BREAKER_NAME, properties.circuitBreaker())));
		TieredCacheConfiguration defaults = configuration(TieredCacheConfiguration.defaultConfig(),
				properties.defaults());
		builder.cacheDefaults(loaderGuard(defaults, null));
		for (String name : configuredCaches()) {
			CacheSettings own = properties.caches().get(name);
			CacheSettings settings = (own != null) ? own.orElse(properties.defaults()) : properties.defaults();
			builder.withCacheConfiguration(name,
					loaderGuard(configuration(TieredCacheConfiguration.defaultConfig(), settings), name));
		}
	}

	/** The caches named in {@code tiered-cache.caches} or by a resilience4j instance of their loader guard. */
	private Set<String> configuredCaches() {
		Set<String> names = new TreeSet<>(this.properties.caches().keySet());
		for (String group : new String[] { BREAKERS, BULKHEADS }) {
			this.binder.bind(group + ".instances", Bindable.mapOf(String.class, Object.class))
				.orElse(Map.of())
				.keySet()
				.stream()
				.filter((instance) -> instance.startsWith(LOADER_PREFIX))
				.map((instance) -> instance.substring(LOADER_PREFIX.length()))
				.forEach(names::add);
		}
		return names;
	}

	private static HotSetConfiguration hotSet(TieredCacheProperties.HotSet properties) {
		HotSetConfiguration[] result = { HotSetConfiguration.defaultConfig() };
		PropertyMapper map = PropertyMapper.get();
		map.from(properties.publishInterval()).to((value) -> result[0] = result[0].withPublishInterval(value));
		map.from(properties.size()).to((value) -> result[0] = result[0].withSize(value));
		map.from(properties.fillTimeout()).to((value) -> result[0] = result[0].withFillTimeout(value));
		return result[0];
	}

	private static TieredCacheConfiguration configuration(TieredCacheConfiguration base, CacheSettings settings) {
		TieredCacheConfiguration[] result = { base };
		PropertyMapper map = PropertyMapper.get();
		map.from(settings.l1Ttl()).to((value) -> result[0] = result[0].withL1Ttl(value));
		map.from(settings.l2Ttl()).to((value) -> result[0] = result[0].withL2Ttl(value));
		map.from(settings.absentTtl()).to((value) -> result[0] = result[0].withAbsentTtl(value));
		map.from(settings.l1MaximumSize()).to((value) -> result[0] = result[0].withL1MaximumSize(value));
		map.from(settings.jitter()).to((value) -> result[0] = result[0].withJitter(value));
		map.from(settings.l1RefreshAhead()).to((value) -> result[0] = result[0].withL1RefreshAhead(value));
		map.from(settings.staleIfError()).to((value) -> result[0] = result[0].withStaleIfError(value));
		return result[0];
	}

	/** The loader guard of cache {@code name} ({@code null}: the defaults) over {@code configuration}. */
	private TieredCacheConfiguration loaderGuard(TieredCacheConfiguration configuration, @Nullable String name) {
		TieredCacheProperties.Loader loader = this.properties.loader();
		String instance = (name != null) ? LOADER_PREFIX + name : null;
		CircuitBreaker breaker = (instance != null) ? resilience4jBreaker(instance, loader.circuitBreaker())
				: loader.circuitBreaker();
		Bulkhead bulkhead = (instance != null) ? resilience4jBulkhead(instance, loader.bulkhead())
				: loader.bulkhead();
		BulkheadConfig.Builder bulkheadConfig = BulkheadConfig
			.from(TieredCacheConfiguration.DEFAULT_LOADER_BULKHEAD);
		PropertyMapper map = PropertyMapper.get();
		map.from(bulkhead.maxConcurrentCalls()).to(bulkheadConfig::maxConcurrentCalls);
		map.from(bulkhead.maxWait()).to(bulkheadConfig::maxWaitDuration);
		boolean enabled = !Boolean.FALSE.equals(breaker.enabled());
		return configuration.withLoaderBulkhead(bulkheadConfig.build())
			.withLoaderCircuitBreaker(
					enabled ? breaker(TieredCacheConfiguration.DEFAULT_LOADER_CIRCUIT_BREAKER, breaker) : null);
	}

	private static CircuitBreakerConfig breaker(CircuitBreakerConfig base, CircuitBreaker properties) {
		CircuitBreakerConfig.Builder builder = CircuitBreakerConfig.from(base);
		PropertyMapper map = PropertyMapper.get();
		map.from(properties.failureRateThreshold()).to(builder::failureRateThreshold);
		map.from(properties.slowCallDurationThreshold()).to(builder::slowCallDurationThreshold);
		map.from(properties.slowCallRateThreshold()).to(builder::slowCallRateThreshold);
		map.from(properties.slidingWindowSize()).to(builder::slidingWindowSize);
		map.from(properties.minimumNumberOfCalls()).to(builder::minimumNumberOfCalls);
		map.from(properties.waitDurationInOpenState()).to(builder::waitDurationInOpenState);
		map.from(properties.permittedNumberOfCallsInHalfOpenState()).to(builder::permittedNumberOfCallsInHalfOpenState);
		return builder.build();
	}

	/** {@code resilience4j.circuitbreaker.instances.<instance>}, then its base config, then {@code tiered}. */
	private CircuitBreaker resilience4jBreaker(String instance, CircuitBreaker tiered) {
		String prefix = BREAKERS + ".instances." + instance;
		CircuitBreaker merged = tiered;
		String base = this.binder.bind(prefix + ".base-config", String.class).orElse(null);
		if (base != null) {
			merged = over(bind(BREAKERS + ".configs." + base), merged);
		}
		return over(bind(prefix), merged);
	}

	private @Nullable CircuitBreaker bind(String prefix) {
		return this.binder.bind(prefix, CircuitBreaker.class).orElse(null);
	}

	/** {@code resilience4j.bulkhead.instances.<instance>}, then its base config, then {@code tiered}. */
	private Bulkhead resilience4jBulkhead(String instance, Bulkhead tiered) {
		String prefix = BULKHEADS + ".instances." + instance;
		String base = this.binder.bind(prefix + ".base-config", String.class).orElse(null);
		Bulkhead merged = (base != null) ? over(bulkhead(BULKHEADS + ".configs." + base), tiered) : tiered;
		return over(bulkhead(prefix), merged);
	}

	/** resilience4j calls the wait {@code max-wait-duration}. */
	private Bulkhead bulkhead(String prefix) {
		return new Bulkhead(this.binder.bind(prefix + ".max-concurrent-calls", Integer.class).orElse(null),
				this.binder.bind(prefix + ".max-wait-duration", Duration.class).orElse(null));
	}

	private static CircuitBreaker over(@Nullable CircuitBreaker top, CircuitBreaker base) {
		if (top == null) {
			return base;
		}
		return new CircuitBreaker(or(top.enabled(), base.enabled()),
				or(top.failureRateThreshold(), base.failureRateThreshold()),
				or(top.slowCallDurationThreshold(), base.slowCallDurationThreshold()),
				or(top.slowCallRateThreshold(), base.slowCallRateThreshold()),
				or(top.slidingWindowSize(), base.slidingWindowSize()),
				or(top.minimumNumberOfCalls(), base.minimumNumberOfCalls()),
				or(top.waitDurationInOpenState(), base.waitDurationInOpenState()),
				or(top.permittedNumberOfCallsInHalfOpenState(), base.permittedNumberOfCallsInHalfOpenState()));
	}

	private static Bulkhead over(Bulkhead top, Bulkhead base) {
		return new Bulkhead(or(top.maxConcurrentCalls(), base.maxConcurrentCalls()), or(top.maxWait(), base.maxWait()));
	}

	private static <T> @Nullable T or(@Nullable T value, @Nullable T fallback) {
		return (value != null) ? value : fallback;
	}

}
