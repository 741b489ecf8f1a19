package dev.concertcache.api.capture;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.MySqlServer;

/**
 * {@link CaptureTests} on a private MySQL 9.7 with GTIDs on (the reader resumes by GTID): the tests kill it and
 * purge its binary log, which the classes sharing the JVM's MySQL must not see.
 */
class MySqlCaptureTests extends CaptureTests {

	@DynamicPropertySource
	static void privateMySql(DynamicPropertyRegistry registry) {
		databaseAndPrivateRedis(registry, new MySqlServer(), true);
	}

}
