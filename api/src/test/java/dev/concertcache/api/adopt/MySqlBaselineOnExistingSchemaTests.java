package dev.concertcache.api.adopt;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MySqlServer;

/** {@link BaselineOnExistingSchemaTests} on the JVM's shared MySQL 9.7. */
class MySqlBaselineOnExistingSchemaTests extends BaselineOnExistingSchemaTests {

	@DynamicPropertySource
	static void sharedMySql(DynamicPropertyRegistry registry) {
		existingSchemaAndBaseline(registry, MySqlServer.shared());
	}

}
