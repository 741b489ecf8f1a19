package dev.concertcache.api.adopt;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MySqlServer;

/** {@link ViewMappedSchemaTests} on the JVM's shared MySQL 9.7. */
class MySqlViewMappedSchemaTests extends ViewMappedSchemaTests {

	@DynamicPropertySource
	static void sharedMySql(DynamicPropertyRegistry registry) {
		viewsOverTheTeamsTables(registry, MySqlServer.shared());
	}

}
