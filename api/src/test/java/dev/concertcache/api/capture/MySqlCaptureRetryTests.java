package dev.concertcache.api.capture;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MySqlServer;

/** {@link CaptureRetryTests} on the JVM's shared MySQL 9.7. */
class MySqlCaptureRetryTests extends CaptureRetryTests {

	@DynamicPropertySource
	static void sharedMySql(DynamicPropertyRegistry registry) {
		databaseAndPrivateRedis(registry, MySqlServer.shared(), false);
	}

}
