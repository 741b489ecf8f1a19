package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.NotInMemoryException;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Reads confined to this instance's memory ({@link TieredCacheManager#inMemoryOnly()}), as an HTTP server's selector
 * thread makes them: a fresh L1 value is answered, anything that would wait for Redis or the loader throws and leaves
 * the tiers as they were. Real Redis; L1 time is a fake ticker.
 */
class TieredCacheInMemoryOnlyTests {

	private static final Item ITEM = new Item(1, "one");

	@RegisterExtension
	final TestScope scope = new TestScope();

	private final CacheInstance.Settings properties = CacheInstance.properties((settings) -> {
		settings.cacheDefaults(settings.cacheDefaults().withL1Ttl(Duration.ofSeconds(10)).withJitter(0));
	});

	@Test
	void aFreshValueInL1IsAnsweredWithoutTheLoader() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader database = new CountingLoader();
		cache.get(1L, database.returning(ITEM));

		Lookup<Item> lookup;
		try (TieredCacheManager.InMemoryOnly scope = instance.manager.inMemoryOnly()) {
			lookup = cache.lookup(1L, database.returning(ITEM));
		}

		assertThat(lookup.value()).contains(ITEM);
		assertThat(lookup.source()).isEqualTo(Source.L1);
		assertThat(database.calls()).isEqualTo(1);
		assertThat(instance.gets("items", "l1", "hit")).isEqualTo(1);
	}

	@Test
	void aKeyL1DoesNotHoldThrowsWithoutReadingRedisOrTheLoader() {
		CacheInstance writer = instance();
		writer.cache("items", Long.class, Item.class).get(1L, () -> Optional.of(ITEM));
		CacheInstance reader = instance();
		CacheUnderTest<Long, Item> cache = reader.cache("items", Long.class, Item.class);
		CountingLoader database = new CountingLoader();

		try (TieredCacheManager.InMemoryOnly scope = reader.manager.inMemoryOnly()) {
			assertThatExceptionOfType(NotInMemoryException.class)
				.isThrownBy(() -> cache.lookup(1L, database.returning(ITEM)));
		}

		assertThat(database.calls()).isZero();
		assertThat(reader.gets("items", "l2", "hit")).as("Redis holds it, but was not read").isZero();
		assertThat(cache.isInL1(1L)).isFalse();
		assertThat(cache.lookup(1L, database.returning(ITEM)).source()).as("outside the scope, the tiers")
			.isEqualTo(Source.L2);
	}

	@Test
	void anExpiredValueIsNotInMemoryAndStaysForTheReadThatRevalidatesIt() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader database = new CountingLoader();
		cache.get(1L, database.returning(ITEM));
		instance.ticker.advance(Duration.ofSeconds(10));

		try (TieredCacheManager.InMemoryOnly scope = instance.manager.inMemoryOnly()) {
			assertThatExceptionOfType(NotInMemoryException.class)
				.isThrownBy(() -> cache.lookup(1L, database.returning(ITEM)));
		}

		assertThat(database.calls()).isEqualTo(1);
		assertThat(cache.lookup(1L, database.returning(ITEM)).source()).isEqualTo(Source.L2);
	}

	@Test
	void closingTheScopeSendsReadsThroughTheTiersAgain() {
		CacheInstance instance = instance();
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountingLoader database = new CountingLoader();

		try (TieredCacheManager.InMemoryOnly scope = instance.manager.inMemoryOnly()) {
			assertThatExceptionOfType(NotInMemoryException.class)
				.isThrownBy(() -> cache.lookup(1L, database.returning(ITEM)));
		}
		Lookup<Item> after = cache.lookup(1L, database.returning(ITEM));

		assertThat(after.source()).isEqualTo(Source.LOADER);
		assertThat(database.calls()).isEqualTo(1);
	}

	@Test
	void aManagerThatKeepsNoValuesInMemoryHasNoSuchScope() {
		CacheInstance redisOnly = this.scope.closeAfter(CacheInstance.start(RedisServer.shared(),
				this.properties.and((settings) -> settings.mode(TieredCacheMode.REDIS))));

		assertThat(redisOnly.manager.inMemoryOnly()).isNull();
	}

	private CacheInstance instance() {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), this.properties));
	}

}
