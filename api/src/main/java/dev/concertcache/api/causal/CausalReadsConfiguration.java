package dev.concertcache.api.causal;

import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.concertcache.api.capture.CaptureProperties;
import dev.concertcache.api.capture.CommitPositions;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * Causal reads wherever the binary log is read (capture not {@code off}): positions come from it.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${concert-cache.capture.mode:off}'.toLowerCase() != 'off'")
class CausalReadsConfiguration {

	/** The cookie outlives a read's longest wait for its position ten times over. */
	@Bean
	FilterRegistrationBean<CausalReadFilter> causalReadFilter(CommitPositions positions, TieredCacheManager caches,
			CaptureProperties properties, ObjectProvider<MeterRegistry> meters) {
		Duration maxWait = properties.progress().causalReadWait();
		CausalReadFilter filter = new CausalReadFilter(positions, caches, maxWait, maxWait.multipliedBy(10),
				meters.getIfAvailable(SimpleMeterRegistry::new));
		FilterRegistrationBean<CausalReadFilter> registration = new FilterRegistrationBean<>(filter);
		registration.addUrlPatterns("/api/*");
		return registration;
	}

}
