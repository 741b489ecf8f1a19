package dev.concertcache.api.capture;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MySqlServer;

/** {@link CaptureTests} on the JVM's shared MySQL 9.7, with GTIDs on: the reader resumes by GTID. */
class MySqlCaptureTests extends CaptureTests {

	@DynamicPropertySource
	static void sharedMySql(DynamicPropertyRegistry registry) {
		databaseAndPrivateRedis(registry, MySqlServer.shared(), false);
	}

}
