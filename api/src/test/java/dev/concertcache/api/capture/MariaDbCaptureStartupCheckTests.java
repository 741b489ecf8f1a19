package dev.concertcache.api.capture;

import org.junit.jupiter.api.BeforeAll;

import dev.concertcache.testsupport.MariaDbServer;

/** {@link CaptureStartupCheckTests} on MariaDB 10.11. */
class MariaDbCaptureStartupCheckTests extends CaptureStartupCheckTests {

	@BeforeAll
	static void mariaDbServers() {
		servers(new MariaDbServer("--skip-log-bin"), new MariaDbServer("--binlog-format=STATEMENT"),
				MariaDbServer.shared());
	}

}
