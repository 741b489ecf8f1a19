package dev.concertcache.api.health;

import javax.sql.DataSource;

import org.springframework.boot.data.redis.health.DataRedisHealthIndicator;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jdbc.health.DataSourceHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Boot's {@code db} and {@code redis} health indicators, reporting {@code DEGRADED} (HTTP 200) instead of
 * {@code DOWN} (HTTP 503): with either backend down this service still answers from its caches, so a probe must
 * not take it out of the load balancer. The bean names replace Boot's own indicators; the probe contract is in
 * ADR 0032 and {@code application.yml}.
 */
@Configuration(proxyBeanMethods = false)
class BackendHealthConfiguration {

	@Bean
	@ConditionalOnEnabledHealthIndicator("db")
	HealthIndicator dbHealthIndicator(DataSource dataSource) {
		return new DegradableHealthIndicator(new DataSourceHealthIndicator(dataSource),
				"cache hits and stale values are served; misses and writes fail with 503");
	}

	@Bean
	@ConditionalOnEnabledHealthIndicator("redis")
	HealthIndicator redisHealthIndicator(RedisConnectionFactory connectionFactory) {
		return new DegradableHealthIndicator(new DataRedisHealthIndicator(connectionFactory),
				"reads are served from each instance's L1 and the database; other instances learn of writes late");
	}

}
