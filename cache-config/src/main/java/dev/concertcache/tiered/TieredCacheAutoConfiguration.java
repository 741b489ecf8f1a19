package dev.concertcache.tiered;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the two-tier cache.
 */
@AutoConfiguration
@EnableConfigurationProperties(TieredCacheProperties.class)
public final class TieredCacheAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	TieredCacheManager tieredCacheManager() {
		return new PassThroughCacheManager();
	}

}
