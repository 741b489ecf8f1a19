package dev.concertcache.api.capture;

import org.junit.jupiter.api.BeforeAll;

import dev.concertcache.testsupport.MySqlServer;

/** {@link CaptureStartupCheckTests} on MySQL 9.7. */
class MySqlCaptureStartupCheckTests extends CaptureStartupCheckTests {

	@BeforeAll
	static void mySqlServers() {
		servers(new MySqlServer("--skip-log-bin"), new MySqlServer("--binlog-format=STATEMENT"), MySqlServer.shared());
	}

}
