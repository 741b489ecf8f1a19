package dev.concertcache.api.capture;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MariaDbServer;

/** {@link CaptureRetryTests} on a private MariaDB 10.11. */
class MariaDbCaptureRetryTests extends CaptureRetryTests {

	@DynamicPropertySource
	static void privateMariaDb(DynamicPropertyRegistry registry) {
		databaseAndPrivateRedis(registry, new MariaDbServer(), true);
	}

}
