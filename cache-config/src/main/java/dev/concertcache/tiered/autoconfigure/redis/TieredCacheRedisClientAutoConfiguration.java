package dev.concertcache.tiered.autoconfigure.redis;

import io.lettuce.core.ReadFrom;
import io.lettuce.core.RedisClient;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientConfigurationBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.StringUtils;

/**
 * {@link EnableAutoConfiguration Auto-configuration} of the Lettuce client behind the cache tier. It contributes
 * customizers to the {@code LettuceConnectionFactory} Boot builds (so connection details from properties, Docker
 * Compose or Testcontainers keep working) and a start-up check of the connection budget (ADR 0020):
 * <ul>
 * <li>{@link TieredCacheLettuceClientOptionsCustomizer}: fail fast while disconnected, bounded request queue,
 * keepalive, auto-reconnect, command timeouts, cluster topology refresh;</li>
 * <li>a client name (shown by {@code CLIENT LIST}) from {@code spring.application.name} unless
 * {@code spring.data.redis.client-name} is set;</li>
 * <li>on a cluster, reads from primaries only ({@link ReadFrom#UPSTREAM}): a replica may return a value its
 * primary has already tombstoned (ADR 0039, "Client"); not on a standalone server, where a read-from setting would turn
 * the connection into a master/replica one with topology discovery and connections of its own;</li>
 * <li>{@link RedisConnectionBudgetCheck} and {@link RedisPersistenceCheck}, off with
 * {@code tiered-cache.redis.startup-check.enabled=false}.</li>
 * </ul>
 * Command timeout, connect timeout, client name and pool are Boot's {@code spring.data.redis.*} properties.
 */
@AutoConfiguration(before = DataRedisAutoConfiguration.class)
@ConditionalOnClass({ RedisClient.class, LettuceConnectionFactory.class })
@ConditionalOnProperty(name = "spring.data.redis.client-type", havingValue = "lettuce", matchIfMissing = true)
@EnableConfigurationProperties({ TieredCacheRedisProperties.class, DataRedisProperties.class })
public final class TieredCacheRedisClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	TieredCacheLettuceClientOptionsCustomizer tieredCacheLettuceClientOptionsCustomizer(
			TieredCacheRedisProperties properties, DataRedisProperties dataRedisProperties) {
		return new TieredCacheLettuceClientOptionsCustomizer(properties, dataRedisProperties);
	}

	@Bean
	@ConditionalOnMissingBean(name = "tieredCacheLettuceClientNameCustomizer")
	LettuceClientConfigurationBuilderCustomizer tieredCacheLettuceClientNameCustomizer(
			DataRedisProperties dataRedisProperties, Environment environment) {
		return (builder) -> {
			String applicationName = environment.getProperty("spring.application.name");
			if (!StringUtils.hasText(dataRedisProperties.getClientName()) && StringUtils.hasText(applicationName)) {
				builder.clientName(applicationName);
			}
		};
	}

	@Bean
	@ConditionalOnMissingBean(name = "tieredCacheLettuceReadFromCustomizer")
	@ConditionalOnProperty(name = "spring.data.redis.cluster.nodes")
	LettuceClientConfigurationBuilderCustomizer tieredCacheLettuceReadFromCustomizer() {
		// Replication is asynchronous: a replica can still hold a value whose tombstone its primary has taken.
		return (builder) -> builder.readFrom(ReadFrom.UPSTREAM);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = "tiered-cache.redis.startup-check.enabled", matchIfMissing = true)
	RedisConnectionBudgetCheck tieredCacheRedisConnectionBudgetCheck(ListableBeanFactory beanFactory,
			TieredCacheRedisProperties properties, DataRedisProperties dataRedisProperties) {
		return new RedisConnectionBudgetCheck(beanFactory, properties, dataRedisProperties);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = "tiered-cache.redis.startup-check.enabled", matchIfMissing = true)
	RedisPersistenceCheck tieredCacheRedisPersistenceCheck(ObjectProvider<RedisConnectionFactory> connectionFactory) {
		return new RedisPersistenceCheck(connectionFactory);
	}

}
