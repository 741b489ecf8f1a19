package dev.concertcache.api.adopt;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MariaDbServer;

/** {@link ViewMappedSchemaTests} on the JVM's shared MariaDB 10.11. */
class MariaDbViewMappedSchemaTests extends ViewMappedSchemaTests {

	@DynamicPropertySource
	static void sharedMariaDb(DynamicPropertyRegistry registry) {
		viewsOverTheTeamsTables(registry, MariaDbServer.shared());
	}

}
