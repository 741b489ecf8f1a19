package dev.concertcache.api.redis;

import io.lettuce.core.metrics.MicrometerCommandLatencyRecorder;
import io.lettuce.core.metrics.MicrometerOptions;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Times every Redis command with Lettuce's own recorder ({@code lettuce_command_completion_seconds}, by command),
 * in place of Boot's observation of each command, which {@code application.yml} turns off: the observation builds
 * a context, its key values and a timer sample per command, a third of Lettuce's event loop time when the service
 * is idle (ADR 0201).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(MicrometerCommandLatencyRecorder.class)
class RedisCommandMetricsConfiguration {

	@Bean
	ClientResourcesBuilderCustomizer redisCommandLatencyRecorder(MeterRegistry registry) {
		// No client-side percentiles: Prometheus computes what it needs from the counts and sums.
		MicrometerOptions options = MicrometerOptions.builder().targetPercentiles(new double[0]).build();
		return (builder) -> builder.commandLatencyRecorder(new MicrometerCommandLatencyRecorder(registry, options));
	}

}
