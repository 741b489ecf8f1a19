package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;

import dev.concertcache.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A full Redis (a crawler's list pages) evicts cached values, never the keys without a time to live that
 * invalidation rests on: generation counters, the value shapes in use, the invalidation stream and its number
 * (redis/redis.conf {@code volatile-lfu}, ADR 0100).
 */
class TieredCacheMemoryPressureTests {

	private RedisServer server;

	private CacheInstance instance;

	@AfterEach
	void stop() {
		if (this.instance != null) {
			this.instance.close();
		}
		if (this.server != null) {
			this.server.close();
		}
	}

	@Test
	void cachedValuesAreEvictedButTheKeysInvalidationNeedsSurviveAFullRedis() {
		// The repository's redis.conf with a memory limit a few thousand pages exceed.
		this.server = new RedisServer("--maxmemory", "4mb");
		this.server.start();
		CacheInstance.Settings properties = CacheInstance.properties();
		this.instance = CacheInstance.start(this.server, properties);
		CacheUnderTest<Long, Item> pages = this.instance.cache("pages", Long.class, Item.class);
		pages.evictAll();
		pages.evict(-1L);
		String padding = "x".repeat(2000);
		for (long key = 0; key < 5000; key++) {
			long page = key;
			pages.get(page, () -> Optional.of(new Item(page, padding)));
		}

		Properties stats = this.instance.redis.execute((RedisCallback<Properties>) (
				connection) -> connection.serverCommands().info("stats"));
		assertThat(Long.parseLong(stats.getProperty("evicted_keys"))).as("values evicted").isPositive();
		String namespace = properties.getKeyPrefix() + ":v1:pages:";
		assertThat(this.instance.redis.hasKey(namespace + "generation")).as("generation counter").isTrue();
		assertThat(this.instance.redis.hasKey(namespace + "shapes")).as("shapes in use").isTrue();
		assertThat(this.instance.redis.hasKey(properties.getKeyPrefix() + ":invalidations")).as("stream").isTrue();
		assertThat(this.instance.redis.hasKey("{" + properties.getKeyPrefix() + ":invalidations}:seq")).as("stream number")
			.isTrue();
		// What makes that so rather than luck: the policy evicts only keys with a TTL, and the only keys without
		// one are those above (a value without a TTL would fill memory for good).
		Properties policy = this.instance.redis.execute((RedisCallback<Properties>) (connection) -> connection
			.serverCommands()
			.getConfig("maxmemory-policy"));
		assertThat(policy.getProperty("maxmemory-policy")).startsWith("volatile-");
		Set<String> keys = new java.util.HashSet<>(this.instance.redis.keys(properties.getKeyPrefix() + ":*"));
		keys.addAll(this.instance.redis.keys("{" + properties.getKeyPrefix() + ":*"));
		Set<String> withoutTtl = keys.stream()
			.filter((key) -> this.instance.redis.getExpire(key) == -1)
			.collect(Collectors.toSet());
		assertThat(withoutTtl).containsExactlyInAnyOrder(namespace + "generation", namespace + "shapes",
				properties.getKeyPrefix() + ":invalidations", "{" + properties.getKeyPrefix() + ":invalidations}:seq");
	}

}
