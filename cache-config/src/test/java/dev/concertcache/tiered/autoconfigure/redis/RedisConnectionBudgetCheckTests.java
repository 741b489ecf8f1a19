package dev.concertcache.tiered.autoconfigure.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.concertcache.testsupport.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The start-up check against a real redis-server with a tiny {@code maxclients}: 10 slots, so an 80% share is 8
 * connections, and the default budget of 2 per instance fits 4 instances but not 5.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisConnectionBudgetCheckTests {

	private RedisServer redis;

	@AfterEach
	void stopRedis() {
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@Test
	void warnsWhenTheExpectedInstancesExceedTheMaxClientsShare(CapturedOutput output) {
		start("--maxclients", "10");
		contextRunner().withPropertyValues("tiered-cache.redis.expected-instances=5").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("Redis connection budget exceeds the server's limit")
				.contains("2 connection(s) per instance (1 shared + 1 dedicated) x 5 instance(s) = 10")
				.contains("8 (80% of maxclients 10)");
		});
	}

	@Test
	void staysQuietWhenTheBudgetFits(CapturedOutput output) {
		start("--maxclients", "10");
		contextRunner().withPropertyValues("tiered-cache.redis.expected-instances=4").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).doesNotContain("exceeds").doesNotContain("not checked");
		});
	}

	@Test
	void countsAnEnabledPool(CapturedOutput output) {
		start("--maxclients", "10");
		contextRunner()
			.withPropertyValues("spring.data.redis.lettuce.pool.enabled=true",
					"spring.data.redis.lettuce.pool.max-active=8")
			.run((context) -> assertThat(output).contains("exceeds").contains("1 dedicated + 8 pooled"));
	}

	@Test
	void fallsBackToInfoWhenConfigIsRenamed(CapturedOutput output) {
		start("--maxclients", "10", "--rename-command", "CONFIG", "\"\"");
		try (RawRedis raw = RawRedis.connect(this.redis.port())) {
			assertThat(raw.command("CONFIG GET maxclients")).startsWith("-ERR unknown");
		}
		contextRunner().withPropertyValues("tiered-cache.redis.expected-instances=5")
			.run((context) -> assertThat(output).contains("exceeds").contains("maxclients 10"));
	}

	@Test
	void retriesAConnectionWhoseHandshakeTimedOut(CapturedOutput output) throws Exception {
		// A stopped server (SIGSTOP) accepts the connection in the kernel and answers the handshake only once it
		// continues, as a cold JVM on a busy machine can answer late: the first attempt times out after
		// spring.data.redis.timeout, and the server continues once that timeout is logged, so the next attempt goes
		// through however long each step takes on this machine.
		start("--maxclients", "10");
		long pid = RawRedis.infoLong(this.redis.port(), "server", "process_id");
		// A first context loads Netty and Lettuce, so that the stopped server is what the check waits for.
		contextRunner().run((context) -> assertThat(context).hasNotFailed());
		SmartInitializingSingleton stopJustBeforeTheCheck = () -> signal(pid, "STOP");
		LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
		logging.setLogLevel(RedisConnectionBudgetCheck.class.getName(), LogLevel.DEBUG);
		ExecutorService continuer = Executors.newSingleThreadExecutor();
		try {
			Future<?> continued = continuer.submit(() -> {
				await().atMost(Duration.ofSeconds(60))
					.pollInterval(Duration.ofMillis(20))
					.until(() -> output.getOut().contains("Redis connection budget check timed out"));
				signal(pid, "CONT");
			});
			// User beans come before auto-configurations, so the server stops right before the check. A timeout
			// of seconds leaves the two attempts after the first ample time to see the server continue.
			contextRunner().withPropertyValues("spring.data.redis.timeout=5s")
				.withBean("stop", SmartInitializingSingleton.class, () -> stopJustBeforeTheCheck)
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(output).contains("timed out (RedisCommandTimeoutException")
						.contains("trying again")
						.contains("Redis connection budget: 2 connection(s) per instance")
						.doesNotContain("not checked");
				});
			continued.get(60, TimeUnit.SECONDS);
		}
		finally {
			// Whatever failed: a stopped server would ignore the SIGTERM that stops it after the test.
			signal(pid, "CONT");
			continuer.shutdownNow();
			logging.setLogLevel(RedisConnectionBudgetCheck.class.getName(), null);
		}
	}

	@Test
	void unreachableRedisIsAWarningNotAStartupFailure(CapturedOutput output) {
		start();
		int port = this.redis.port();
		this.redis.kill();
		contextRunner(port).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("Redis connection budget not checked, Redis is not reachable")
				.contains("Connection refused");
		});
	}

	private static void signal(long pid, String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
			assertThat(kill.waitFor(30, TimeUnit.SECONDS) && kill.exitValue() == 0).as("kill -%s %s", signal, pid)
				.isTrue();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private void start(String... arguments) {
		this.redis = new RedisServer(arguments);
		this.redis.start();
	}

	private ApplicationContextRunner contextRunner() {
		return contextRunner(this.redis.port());
	}

	private static ApplicationContextRunner contextRunner(int port) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(TieredCacheRedisClientAutoConfiguration.class,
					DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
					"spring.data.redis.timeout=250ms", "spring.data.redis.connect-timeout=500ms",
					"spring.data.redis.lettuce.pool.enabled=false");
	}

}
