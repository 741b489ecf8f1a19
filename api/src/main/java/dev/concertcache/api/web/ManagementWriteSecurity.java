package dev.concertcache.api.web;

import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.context.annotation.Bean;

import dev.concertcache.api.ApiProperties;

/**
 * Every write to an actuator endpoint ({@code DELETE /actuator/caches}, a logger's level, whatever else is
 * exposed) needs the admin token; reads (health for probes, prometheus for scrapes, the cache listing) stay open.
 * Emptying every cache during a sale sends every read to the database, so reaching the management port must not
 * be enough (ADR 0004).
 * <p>
 * Deliberately not a {@code @Configuration}: the application's component scan must not pick it up. It is listed
 * in {@code META-INF/spring/org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration.imports}
 * without a context type, so Boot imports it into the management server's child context when the management port
 * differs from the public one, and into the application context when they are the same; either way the filter
 * sits in front of the actuator.
 */
class ManagementWriteSecurity {

	@Bean
	AdminTokenFilter managementAdminTokenFilter(ApiProperties properties, WebEndpointProperties endpoints) {
		String basePath = endpoints.getBasePath();
		return new AdminTokenFilter(properties, basePath.isEmpty() ? "/" : basePath + "/");
	}

}
