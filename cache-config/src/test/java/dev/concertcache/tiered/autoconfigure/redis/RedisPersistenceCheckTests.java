package dev.concertcache.tiered.autoconfigure.redis;

import dev.concertcache.testsupport.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up check of a real redis-server's persistence: a restart may bring it back empty or as it acknowledged,
 * never as it was some time before (a snapshot, an append-only file synced once a second).
 */
class RedisPersistenceCheckTests {

	private RedisServer redis;

	@AfterEach
	void stopRedis() {
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@Test
	void startsOnTheRepositorysConfigurationWithoutPersistence() {
		start();
		contextRunner().run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void refusesAServerThatSavesSnapshots() {
		start("--save", "60 1");
		contextRunner().run((context) -> assertThat(context).getFailure()
			.hasMessageContaining("RDB snapshots (save \"60 1\")")
			.hasMessageContaining("appendfsync always"));
	}

	@Test
	void refusesAnAppendOnlyFileSyncedOnceASecond() {
		start("--appendonly", "yes", "--appendfsync", "everysec");
		contextRunner().run((context) -> assertThat(context).getFailure()
			.hasMessageContaining("appendonly yes with appendfsync everysec"));
	}

	@Test
	void startsOnAnAppendOnlyFileSyncedBeforeEveryReply() {
		start("--appendonly", "yes", "--appendfsync", "always", "--save", "60 1");
		contextRunner().run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void isOffWithTheOtherStartUpChecks() {
		start("--save", "60 1");
		contextRunner().withPropertyValues("tiered-cache.redis.startup-check.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RedisPersistenceCheck.class));
	}

	private void start(String... arguments) {
		this.redis = new RedisServer(arguments);
		this.redis.start();
	}

	private ApplicationContextRunner contextRunner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(TieredCacheRedisClientAutoConfiguration.class,
					DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + this.redis.port(),
					"spring.data.redis.timeout=2s", "spring.data.redis.lettuce.pool.enabled=false");
	}

}
