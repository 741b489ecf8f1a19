package dev.concertcache.api;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MariaDbServer;

/**
 * Base of the API tests: the application on a random port against the private MariaDB shared by the test JVM,
 * driven over real HTTP.
 */
public abstract class ApiTestSupport extends ApiHttpTestSupport {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		MariaDbServer db = MariaDbServer.shared();
		registry.add("spring.datasource.url", db::jdbcUrl);
		registry.add("spring.datasource.username", () -> MariaDbServer.USER);
		registry.add("spring.datasource.password", () -> MariaDbServer.PASSWORD);
	}

}
