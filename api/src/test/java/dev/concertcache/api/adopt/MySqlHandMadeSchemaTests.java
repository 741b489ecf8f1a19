package dev.concertcache.api.adopt;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MySqlServer;

/** {@link HandMadeSchemaTests} on the JVM's shared MySQL 9.7. */
class MySqlHandMadeSchemaTests extends HandMadeSchemaTests {

	@DynamicPropertySource
	static void sharedMySql(DynamicPropertyRegistry registry) {
		handMadeSchemaAndReadOnlyUser(registry, MySqlServer.shared());
	}

}
