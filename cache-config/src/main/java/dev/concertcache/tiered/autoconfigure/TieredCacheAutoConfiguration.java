package dev.concertcache.tiered.autoconfigure;

import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.support.PassThroughCacheManager;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.support.TieredCacheManagerBuilder;

/**
 * {@link EnableAutoConfiguration Auto-configuration} of the two-tier cache. Creates the
 * {@link TieredCacheManager} of {@code tiered-cache.mode}: a {@link DefaultTieredCacheManager} over the
 * application's {@link RedisConnectionFactory} for TIERED and REDIS, a pass-through one for NONE (the default).
 * An application's own {@link TieredCacheManager} bean wins.
 *
 * @author concert-cache
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@EnableConfigurationProperties(TieredCacheProperties.class)
public final class TieredCacheAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ Caffeine.class, RedisConnectionFactory.class, CircuitBreaker.class, Bulkhead.class })
	@Conditional(OnRedisModeCondition.class)
	static class RedisTiersConfiguration {

		@Bean
		@ConditionalOnMissingBean(TieredCacheManager.class)
		DefaultTieredCacheManager tieredCacheManager(TieredCacheProperties properties, Environment environment,
				ObjectProvider<RedisConnectionFactory> connectionFactory, ObjectProvider<MeterRegistry> meterRegistry,
				ObjectProvider<CircuitBreakerRegistry> circuitBreakerRegistry,
				ObjectProvider<BulkheadRegistry> bulkheadRegistry,
				ObjectProvider<TieredCacheManagerCustomizer> customizers) {
			RedisConnectionFactory factory = connectionFactory.getIfUnique();
			Assert.state(factory != null, () -> "tiered-cache.mode is " + properties.mode()
					+ " but there is no RedisConnectionFactory: configure spring.data.redis.* or set tiered-cache.mode=none");
			TieredCacheManagerBuilder builder = DefaultTieredCacheManager.builder(factory);
			new TieredCacheSettingsMapper(properties, Binder.get(environment)).applyTo(builder);
			meterRegistry.ifUnique(builder::meterRegistry);
			circuitBreakerRegistry.ifUnique(builder::circuitBreakerRegistry);
			bulkheadRegistry.ifUnique(builder::bulkheadRegistry);
			customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
			return builder.build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(prefix = "tiered-cache", name = "mode", havingValue = "none", matchIfMissing = true)
	static class PassThroughConfiguration {

		@Bean
		@ConditionalOnMissingBean(TieredCacheManager.class)
		PassThroughCacheManager tieredCacheManager() {
			return new PassThroughCacheManager();
		}

	}

}
