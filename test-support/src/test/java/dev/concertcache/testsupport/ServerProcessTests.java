package dev.concertcache.testsupport;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ServerProcessTests {

	/**
	 * A detached server that exited is a zombie until init reaps it, as this one is until its parent ({@code sleep 30},
	 * which reaps nothing) ends: starting it must not wait on it as if it ran.
	 */
	@Test
	void aZombieIsNotRunningThoughAProcessHandleCallsItAlive() throws Exception {
		Process parent = new ProcessBuilder("sh", "-c", "sleep 0.2 & echo $!; exec sleep 30").start();
		try {
			BufferedReader output = new BufferedReader(
					new InputStreamReader(parent.getInputStream(), StandardCharsets.UTF_8));
			long pid = Long.parseLong(output.readLine().trim());
			Path stat = Path.of("/proc", String.valueOf(pid), "stat");
			while (!Files.readString(stat).contains(") Z ")) {
				LockSupport.parkNanos(Duration.ofMillis(10).toNanos()); // sleep 0.2 exits after the exec
			}
			ProcessHandle zombie = ProcessHandle.of(pid).orElseThrow();

			assertThat(zombie.isAlive()).isTrue();
			assertThat(ServerProcess.running(zombie)).isFalse();
		}
		finally {
			parent.destroyForcibly();
		}
	}

}
