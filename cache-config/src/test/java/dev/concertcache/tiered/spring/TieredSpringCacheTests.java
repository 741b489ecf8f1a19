package dev.concertcache.tiered.spring;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.cache.autoconfigure.CacheAutoConfiguration;
import org.springframework.boot.cache.autoconfigure.metrics.CacheMetricsAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.concurrent.ConcurrentMapCacheManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.autoconfigure.TieredCacheAutoConfiguration;
import dev.concertcache.tiered.autoconfigure.TieredSpringCacheAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The tiers as Spring's cache: an annotated service over two application contexts (two instances) sharing one
 * real Redis, with the standard {@code cache.*} meters Boot binds.
 */
class TieredSpringCacheTests {

	private final Database database = new Database();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, TieredCacheAutoConfiguration.class,
				TieredSpringCacheAutoConfiguration.class, CacheAutoConfiguration.class,
				CacheMetricsAutoConfiguration.class))
		.withUserConfiguration(CachingConfiguration.class)
		.withBean(Database.class, () -> this.database)
		.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + RedisServer.shared().port(),
				"spring.data.redis.timeout=250ms", "tiered-cache.mode=tiered",
				"tiered-cache.key-prefix=test-" + UUID.randomUUID());

	@Test
	void anAnnotatedServiceReadsL1ThenL2OfAnotherInstanceAndTheDatabaseOnce() {
		this.database.rows.put(1L, new Item(1, "one"));
		this.contextRunner.run((first) -> this.contextRunner.run((second) -> {
			Items one = items(first);
			Items two = items(second);

			assertThat(one.find(1L)).isEqualTo(new Item(1, "one"));
			assertThat(one.find(1L)).isEqualTo(new Item(1, "one"));
			assertThat(two.find(1L)).isEqualTo(new Item(1, "one"));

			assertThat(this.database.reads.get()).isOne();
			assertThat(tierGets(first, "l1", "hit")).isOne();
			assertThat(tierGets(second, "l2", "hit")).isOne();
			assertThat(gets(first, "hit")).isOne();
			assertThat(gets(first, "miss")).isOne();
			assertThat(standard(first, "cache.puts")).isOne();
			assertThat(standard(first, "cache.size")).isOne();
			assertThat(gets(second, "hit")).isOne();
			assertThat(gets(second, "miss")).isZero();
			assertThat(standard(second, "cache.puts")).isZero();
		}));
	}

	@Test
	void anEvictionOnOneInstanceReachesTheOtherAndTheNewValueIsLoadedOnce() {
		this.database.rows.put(2L, new Item(2, "two"));
		this.contextRunner.run((first) -> this.contextRunner.run((second) -> {
			Items one = items(first);
			Items two = items(second);
			one.find(2L);
			two.find(2L);

			two.rename(2L, "deux");

			assertThat(two.find(2L)).isEqualTo(new Item(2, "deux"));
			await().atMost(Duration.ofSeconds(2)).until(() -> one.find(2L).name().equals("deux"));
			assertThat(this.database.reads.get()).isEqualTo(2);
			assertThat(standard(second, "cache.evictions")).isPositive();
		}));
	}

	@Test
	void aNullResultIsCachedAsAbsent() {
		this.contextRunner.run((context) -> {
			Items items = items(context);
			assertThat(items.find(404L)).isNull();
			assertThat(items.find(404L)).isNull();
			assertThat(this.database.reads.get()).isOne();
		});
	}

	@Test
	void aKeyOfAnotherNumericTypeIsConvertedAndASimpleKeyIsRefusedNamingTheCache() {
		this.database.rows.put(3L, new Item(3, "three"));
		this.contextRunner.run((context) -> {
			Items items = items(context);
			assertThat(items.findByInt(3)).isEqualTo(new Item(3, "three"));
			assertThat(items.find(3L)).isEqualTo(new Item(3, "three"));
			assertThat(this.database.reads.get()).isOne();
			assertThatIllegalArgumentException().isThrownBy(() -> items.findBoth(3L, "three"))
				.withMessageContaining("Cache 'items' has keys of java.lang.Long")
				.withMessageContaining("SimpleKey");
		});
	}

	@Test
	void aCacheableWithoutSyncIsRefusedInsteadOfNeverCaching() {
		this.contextRunner.run((context) -> assertThatThrownBy(() -> items(context).findUnsynced(1L))
			.isInstanceOf(UnsupportedOperationException.class)
			.hasMessageContaining("@Cacheable(sync = true)"));
	}

	@Test
	void anUndeclaredCacheNameIsNotACache() {
		this.contextRunner.run((context) -> {
			assertThat(context.getBean(CacheManager.class).getCacheNames()).containsExactly("items");
			assertThat(context.getBean(CacheManager.class).getCache("itmes")).isNull();
		});
	}

	@Test
	void anApplicationCacheManagerWins() {
		this.contextRunner.withBean("ownCacheManager", CacheManager.class, ConcurrentMapCacheManager::new)
			.run((context) -> assertThat(context).hasSingleBean(CacheManager.class)
				.doesNotHaveBean(TieredSpringCacheManager.class));
	}

	/** Waits for the invalidation listener, whose first connection flushes L1. */
	private static Items items(AssertableApplicationContext context) {
		DefaultTieredCacheManager manager = context.getBean(DefaultTieredCacheManager.class);
		await().atMost(Duration.ofSeconds(5)).until(manager::isListening);
		return context.getBean(Items.class);
	}

	private static long tierGets(AssertableApplicationContext context, String tier, String result) {
		return (long) context.getBean(MeterRegistry.class)
			.get("tiered.cache.gets")
			.tags("cache", "items", "tier", tier, "result", result)
			.functionCounter()
			.count();
	}

	private static long gets(AssertableApplicationContext context, String result) {
		return (long) context.getBean(MeterRegistry.class)
			.get("cache.gets")
			.tags("cache", "items", "cache.manager", "cacheManager", "result", result)
			.functionCounter()
			.count();
	}

	private static long standard(AssertableApplicationContext context, String name) {
		var search = context.getBean(MeterRegistry.class)
			.get(name)
			.tags("cache", "items", "cache.manager", "cacheManager");
		return (long) ((name.equals("cache.size")) ? search.gauge().value() : search.functionCounter().count());
	}

	record Item(long id, String name) {
	}

	/** The database: rows by id, and how many reads reached it. */
	static final class Database {

		final Map<Long, Item> rows = new ConcurrentHashMap<>();

		final AtomicInteger reads = new AtomicInteger();

		Item read(long id) {
			this.reads.incrementAndGet();
			return this.rows.get(id);
		}

	}

	static class Items {

		private final Database database;

		Items(Database database) {
			this.database = database;
		}

		@Cacheable(cacheNames = "items", sync = true)
		public Item find(Long id) {
			return this.database.read(id);
		}

		@Cacheable(cacheNames = "items", sync = true)
		public Item findByInt(int id) {
			return this.database.read(id);
		}

		@Cacheable(cacheNames = "items", sync = true)
		public Item findBoth(Long id, String name) {
			return this.database.read(id);
		}

		@Cacheable(cacheNames = "items")
		public Item findUnsynced(Long id) {
			return this.database.read(id);
		}

		@CacheEvict(cacheNames = "items", key = "#id")
		public void rename(Long id, String name) {
			this.database.rows.put(id, new Item(id, name));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableCaching
	static class CachingConfiguration {

		@Bean
		Items items(Database database) {
			return new Items(database);
		}

		@Bean
		TieredSpringCacheManagerCustomizer itemsCache() {
			return (builder) -> builder.cache("items", Long.class, Item.class);
		}

	}

}
