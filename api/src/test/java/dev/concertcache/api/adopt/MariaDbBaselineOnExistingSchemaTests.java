package dev.concertcache.api.adopt;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MariaDbServer;

/** {@link BaselineOnExistingSchemaTests} on the JVM's shared MariaDB 10.11. */
class MariaDbBaselineOnExistingSchemaTests extends BaselineOnExistingSchemaTests {

	@DynamicPropertySource
	static void sharedMariaDb(DynamicPropertyRegistry registry) {
		existingSchemaAndBaseline(registry, MariaDbServer.shared());
	}

}
