package dev.concertcache.api.adopt;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MariaDbServer;

/** {@link HandMadeSchemaTests} on the JVM's shared MariaDB 10.11. */
class MariaDbHandMadeSchemaTests extends HandMadeSchemaTests {

	@DynamicPropertySource
	static void sharedMariaDb(DynamicPropertyRegistry registry) {
		handMadeSchemaAndReadOnlyUser(registry, MariaDbServer.shared());
	}

}
