package dev.concertcache.api;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.concertcache.api.capture.CaptureProperties;
import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * Base of the API tests under a cache profile: the shared private Redis, and 30 generated concerts with
 * every cache emptied before each test (the generator writes the database directly, past the cache).
 */
public abstract class CachedApiTestSupport extends ApiTestSupport {

	@Autowired
	protected TieredCacheManager caches;

	@Autowired
	private StringRedisTemplate redis;

	@Autowired
	private Environment environment;

	/** The shared private Redis; for tests of cache profiles that do not extend this class. */
	@DynamicPropertySource
	public static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> RedisServer.shared().port());
	}

	@BeforeEach
	void freshDataAndEmptyCaches() {
		generate(30);
		awaitCaptureCaughtUp();
		((DefaultTieredCacheManager) this.caches).evictAllCaches();
	}

	/**
	 * Waits until change data capture (ADR 0033) has processed everything committed so far, so that its
	 * invalidations of the generated rows do not land in the middle of a test that counts loads.
	 */
	protected void awaitCaptureCaughtUp() {
		if ("off".equalsIgnoreCase(this.environment.getProperty("concert-cache.capture.mode", "off"))) {
			return;
		}
		String gtid = this.jdbc.sql("SELECT @@gtid_binlog_pos").query(String.class).single();
		String key = "{" + this.environment.getProperty("tiered-cache.key-prefix") + ":invalidations}:feed";
		org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
			String position = this.redis.opsForValue().get(key);
			return position != null && position.endsWith(";gtid;" + gtid);
		});
		awaitCaptureConfirmed(this.caches);
	}

	/**
	 * Waits until the capture's reader has confirmed its progress recently (ADR 0039): before, an instance in mode
	 * {@code required} reads past both tiers, which a test that counts hits or loads would see.
	 */
	public static void awaitCaptureConfirmed(TieredCacheManager caches) {
		if (!(caches instanceof DefaultTieredCacheManager manager)) {
			return;
		}
		org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
			Duration silence = manager.getChangeFeedSilence();
			return silence != null && silence.compareTo(CaptureProperties.DEFAULT_MAX_LAG.dividedBy(2)) < 0;
		});
	}

	/**
	 * Waits until the capture's reader has confirmed everything committed before {@code committedAt} ({@link
	 * System#nanoTime()}, the clock of the instance's watermark): until then the instance reads past both tiers.
	 */
	public static void awaitCaptureConfirmedSince(TieredCacheManager caches, long committedAt) {
		if (!(caches instanceof DefaultTieredCacheManager manager)) {
			return;
		}
		org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
			Duration silence = manager.getChangeFeedSilence();
			return silence != null && silence.compareTo(Duration.ofNanos(System.nanoTime() - committedAt)) < 0;
		});
	}

}
