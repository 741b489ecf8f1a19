package dev.concertcache.tiered.support;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import dev.concertcache.testsupport.MariaDbServer;
import dev.concertcache.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Eviction on write happens after the database transaction commits, never before, and not at all on
 * rollback; a real transaction manager over a real MariaDB (ADR 0039).
 */
class TieredCacheTransactionTests {

	private static final Item OLD = new Item(1, "old");

	@RegisterExtension
	final TestScope scope = new TestScope();

	private JdbcTemplate jdbc;

	private TransactionTemplate transactions;

	@BeforeEach
	void database() {
		MariaDbServer db = MariaDbServer.shared();
		DriverManagerDataSource dataSource = new DriverManagerDataSource(db.jdbcUrl(), MariaDbServer.USER,
				MariaDbServer.PASSWORD);
		this.jdbc = new JdbcTemplate(dataSource);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS tiered_cache_item (id BIGINT PRIMARY KEY, name VARCHAR(50))");
		this.jdbc.update("DELETE FROM tiered_cache_item");
		this.jdbc.update("INSERT INTO tiered_cache_item VALUES (1, 'old')");
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
	}

	@Test
	void evictionInsideATransactionWaitsForTheCommit() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		onA.get(1L, new CountingLoader().returning(OLD));
		onB.get(1L, new CountingLoader().returning(OLD));
		this.transactions.executeWithoutResult((status) -> {
			this.jdbc.update("UPDATE tiered_cache_item SET name = 'new' WHERE id = 1");
			onA.evict(1L);
			assertThat(onA.isInL1(1L)).as("evicted before the commit").isTrue();
			assertThat(a.count("tiered.cache.invalidations.sent", "cache", "items")).isZero();
		});
		assertThat(onA.isInL1(1L)).isFalse();
		assertThat(a.count("tiered.cache.invalidations.sent", "cache", "items")).isEqualTo(1);
		await().atMost(Duration.ofSeconds(2)).until(() -> !onB.isInL1(1L));
		assertThat(onB.get(1L, () -> this.jdbc
			.query("SELECT id, name FROM tiered_cache_item WHERE id = 1",
					(rs, row) -> new Item(rs.getLong("id"), rs.getString("name")))
			.stream()
			.findFirst())).contains(new Item(1, "new"));
	}

	@Test
	void rollbackEvictsNothing() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		onA.get(1L, new CountingLoader().returning(OLD));
		String generationKey = properties.getKeyPrefix() + ":v1:items:generation";
		String generation = a.redis.opsForValue().get(generationKey);
		assertThatIllegalStateException().isThrownBy(() -> this.transactions.executeWithoutResult((status) -> {
			this.jdbc.update("UPDATE tiered_cache_item SET name = 'new' WHERE id = 1");
			onA.evict(1L);
			onA.evictAll();
			throw new IllegalStateException("write failed");
		}));
		assertThat(this.jdbc.queryForObject("SELECT name FROM tiered_cache_item WHERE id = 1", String.class))
			.isEqualTo("old");
		assertThat(onA.isInL1(1L)).isTrue();
		assertThat(a.count("tiered.cache.invalidations.sent", "cache", "items")).isZero();
		assertThat(a.redis.opsForValue().get(onA.redisKey(1L)))
			.matches("\\{\"v\":1,\"f\":\\d+,\"r\":\\d+,\"s\":\"[0-9a-f]{8}\",\"d\":\\{\"id\":1,\"name\":\"old\"}}");
		assertThat(a.redis.opsForValue().get(generationKey)).isEqualTo(generation);
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), properties));
	}

}
