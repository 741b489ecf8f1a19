package dev.concertcache.tiered.autoconfigure.redis;

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
	void retriesAConnectionWhoseHandshakeTimedOut(CapturedOutput output) {
		// A paused server answers the handshake late, as a cold JVM on a busy machine can: the first attempt
		// times out after spring.data.redis.timeout (250 ms), the second one goes through once the pause ends.
		start("--maxclients", "10");
		// A first context loads Netty and Lettuce, so that the paused one below is the only slow part.
		contextRunner().run((context) -> assertThat(context).hasNotFailed());
		SmartInitializingSingleton pauseJustBeforeTheCheck = () -> {
			try (RawRedis raw = RawRedis.connect(this.redis.port())) {
				assertThat(raw.command("CLIENT PAUSE 400 ALL")).isEqualTo("+OK");
			}
		};
		LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
		logging.setLogLevel(RedisConnectionBudgetCheck.class.getName(), LogLevel.DEBUG);
		try {
			// User beans come before auto-configurations, so this pause starts right before the check.
			contextRunner().withBean("pause", SmartInitializingSingleton.class, () -> pauseJustBeforeTheCheck)
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(output).contains("timed out (RedisCommandTimeoutException")
						.contains("trying again")
						.contains("Redis connection budget: 2 connection(s) per instance")
						.doesNotContain("not checked");
				});
		}
		finally {
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
