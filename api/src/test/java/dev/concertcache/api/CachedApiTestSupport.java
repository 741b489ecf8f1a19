package dev.concertcache.api;

import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.DefaultTieredCacheManager;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * Base of the API tests under a cache profile: the shared private Redis, and 30 generated concerts with
 * every cache emptied before each test (the generator writes the database directly, past the cache).
 */
public abstract class CachedApiTestSupport extends ApiTestSupport {

	@Autowired
	protected TieredCacheManager caches;

	/** The shared private Redis; for tests of cache profiles that do not extend this class. */
	@DynamicPropertySource
	public static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> RedisServer.shared().port());
	}

	@BeforeEach
	void freshDataAndEmptyCaches() {
		generate(30);
		((DefaultTieredCacheManager) this.caches).evictAllCaches();
	}

}
