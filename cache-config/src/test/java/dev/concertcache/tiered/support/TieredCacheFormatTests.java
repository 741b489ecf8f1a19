package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.format.CacheKeyEncoder;
import dev.concertcache.tiered.format.JsonValueCodec;
import dev.concertcache.tiered.format.ValueShape;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * What lands in Redis: versioned JSON under namespaced keys built from typed parameters (ADR 0012).
 */
class TieredCacheFormatTests {

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void valueIsStoredAsVersionedJsonUnderANamespacedKey() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance instance = instance(properties);
		CacheUnderTest<PageKey, Page> pages = instance.cache("pages", PageKey.class, Page.class);
		long before = System.currentTimeMillis();
		pages.get(new PageKey(40, 20), () -> Optional.of(new Page(List.of(new Item(41, "a,b")), "next")));
		String key = pages.redisKey(new PageKey(40, 20));
		String shape = ValueShape.fingerprint(JsonValueCodec.defaultMapper(), Page.class);
		assertThat(key).isEqualTo(properties.getKeyPrefix() + ":v1:pages:g" + key.split(":g")[1].split(":")[0] + ":"
				+ shape + ":{pages:40,20}");
		String stored = instance.redis.opsForValue().get(key);
		assertThat(stored).matches("\\{\"v\":1,\"f\":\\d+,\"r\":\\d+,\"s\":\"" + shape + "\",\"d\":\\{.*");
		// The fresh-until time (ADR 0031) leads, so that the lock script can compare it without parsing JSON.
		long freshUntil = Long.parseLong(stored.replaceFirst("^\\{\"v\":1,\"f\":(\\d+),.*$", "$1"));
		assertThat(freshUntil - before).isBetween((long) (TieredCacheConfiguration.DEFAULT_L2_TTL.toMillis() * 0.9) - 1,
				(long) (TieredCacheConfiguration.DEFAULT_L2_TTL.toMillis() * 1.1) + 1000);
		// Then when the load began, which the change feed's gate goes by (ADR 0039).
		long readAt = Long.parseLong(stored.replaceFirst("^\\{\"v\":1,\"f\":\\d+,\"r\":(\\d+),.*$", "$1"));
		assertThat(readAt).isBetween(before, System.currentTimeMillis());
		assertThat(stored.replaceFirst(",\"f\":\\d+,\"r\":\\d+,\"s\":\"[0-9a-f]{8}\"", ""))
			.isEqualTo("{\"v\":1,\"d\":{\"items\":[{\"id\":41,\"name\":\"a,b\"}],\"next\":\"next\"}}");
	}

	@Test
	void freshInstanceReadsWhatAnEarlierOneWroteWithoutLoading() {
		CacheInstance.Settings properties = CacheInstance.properties();
		try (CacheInstance writer = CacheInstance.start(RedisServer.shared(), properties)) {
			writer.cache("pages", PageKey.class, Page.class)
				.get(new PageKey(0, 2), () -> Optional.of(new Page(List.of(new Item(1, "x"), new Item(2, "y")), "c")));
		}
		CacheInstance reader = instance(properties);
		CountingLoader loader = new CountingLoader();
		Optional<Page> page = reader.cache("pages", PageKey.class, Page.class).get(new PageKey(0, 2), () -> {
			loader.returning(null).get();
			return Optional.empty();
		});
		assertThat(page).contains(new Page(List.of(new Item(1, "x"), new Item(2, "y")), "c"));
		assertThat(loader.calls()).isZero();
		assertThat(reader.gets("pages", "l2", "hit")).isEqualTo(1);
	}

	@Test
	void theShapeOfAValueTypeIsItsJsonPropertiesAndTheirKinds() {
		JsonMapper mapper = JsonValueCodec.defaultMapper();
		assertThat(ValueShape.describe(mapper, Page.class)).isEqualTo("{items:[{id:integer,name:string}],next:string}");
		assertThat(ValueShape.fingerprint(mapper, Item.class)).isEqualTo(ValueShape.fingerprint(mapper, Reordered.class))
			.isNotEqualTo(ValueShape.fingerprint(mapper, Renamed.class))
			.isNotEqualTo(ValueShape.fingerprint(mapper, Extended.class))
			.isNotEqualTo(ValueShape.fingerprint(mapper, Retyped.class))
			.matches("[0-9a-f]{8}");
	}

	@Test
	void aValueWrittenWithoutTheReadersShapeIsAMissCountedAndReplacedNeverHalfRead() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance instance = instance(properties);
		CacheUnderTest<Long, Item> items = instance.cache("items", Long.class, Item.class);
		// What this code wrote before values carried their shape, and a value of another shape under this key.
		instance.redis.opsForValue().set(items.redisKey(1L), "{\"v\":1,\"d\":{\"id\":1}}");
		instance.redis.opsForValue().set(items.redisKey(2L), "{\"v\":1,\"s\":\"0badf00d\",\"d\":{\"id\":2}}");
		CountingLoader loader = new CountingLoader();
		assertThat(items.get(1L, loader.returning(new Item(1, "loaded")))).contains(new Item(1, "loaded"));
		assertThat(items.get(2L, loader.returning(new Item(2, "loaded")))).contains(new Item(2, "loaded"));
		assertThat(loader.calls()).isEqualTo(2);
		assertThat(instance.count("tiered.cache.errors", "cache", "items", "operation", "shape")).isEqualTo(2);
		assertThat(instance.redis.opsForValue().get(items.redisKey(1L))).contains("\"name\":\"loaded\"");
	}

	@Test
	void duringARollingDeployEachShapeIsServedOnlyItsOwnValuesWithoutOverwritingTheOther() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance old = instance(properties);
		CacheInstance next = instance(properties);
		CacheUnderTest<Long, Item> onOld = old.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Renamed> onNext = next.cache("items", Long.class, Renamed.class);
		CountingLoader oldLoads = new CountingLoader();
		AtomicInteger nextLoads = new AtomicInteger();
		Supplier<Optional<Renamed>> nextLoader = () -> {
			nextLoads.incrementAndGet();
			return Optional.of(new Renamed(1, "one"));
		};

		assertThat(onOld.get(1L, oldLoads.returning(new Item(1, "one")))).contains(new Item(1, "one"));
		// The new version never reads the old value (its "title" would be null): it loads its own.
		assertThat(onNext.get(1L, nextLoader)).contains(new Renamed(1, "one"));
		assertThat(nextLoads).hasValue(1);
		assertThat(onOld.redisKey(1L)).isNotEqualTo(onNext.redisKey(1L));

		// No thrash: fresh instances of either version find their own value in Redis and load nothing.
		CacheInstance oldAgain = instance(properties);
		CacheInstance nextAgain = instance(properties);
		assertThat(oldAgain.cache("items", Long.class, Item.class).get(1L, oldLoads.returning(null)))
			.contains(new Item(1, "one"));
		assertThat(nextAgain.cache("items", Long.class, Renamed.class).get(1L, nextLoader))
			.contains(new Renamed(1, "one"));
		assertThat(oldLoads.calls()).isEqualTo(1);
		assertThat(nextLoads).hasValue(1);

		// One invalidation channel: a write through the old version evicts the new version's value too.
		onOld.evict(1L);
		CacheInstance nextAfterWrite = instance(properties);
		assertThat(nextAfterWrite.cache("items", Long.class, Renamed.class)
			.get(1L, () -> Optional.of(new Renamed(1, "changed")))).contains(new Renamed(1, "changed"));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(onNext.get(1L, () -> Optional.of(new Renamed(1, "changed"))))
				.contains(new Renamed(1, "changed")));
	}

	@Test
	void unreadableValueIsAMissThatTheLoadedValueReplaces() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance instance = instance(properties);
		CacheUnderTest<Long, Item> items = instance.cache("items", Long.class, Item.class);
		String key = items.redisKey(1L);
		instance.redis.opsForValue().set(key, "{\"v\":2,\"d\":\"from a future format\"}");
		CountingLoader loader = new CountingLoader();
		assertThat(items.get(1L, loader.returning(new Item(1, "one"))))
			.contains(new Item(1, "one"));
		assertThat(loader.calls()).isEqualTo(1);
		assertThat(instance.count("tiered.cache.errors", "cache", "items", "operation", "deserialize")).isEqualTo(1);
		assertThat(instance.redis.opsForValue().get(key))
			.matches("\\{\"v\":1,\"f\":\\d+,\"r\":\\d+,\"s\":\"[0-9a-f]{8}\",\"d\":\\{\"id\":1,\"name\":\"one\"}}");
	}

	@Test
	void recordKeysJoinTheirComponentsEscapeSafely() {
		CacheKeyEncoder<Mixed> encoder = CacheKeyEncoder.of("mixed", Mixed.class);
		UUID id = UUID.fromString("00000000-0000-0000-0000-000000000001");
		assertThat(encoder.encode(new Mixed("a,b", 1, id))).isEqualTo("a\\,b,1," + id);
		assertThat(encoder.encode(new Mixed("a", null, id))).isEqualTo("a,\\N," + id);
		assertThat(encoder.encode(new Mixed("a\\", 1, null))).isEqualTo("a\\\\,1,\\N");
		assertThat(encoder.encode(new Mixed("a\\", 1, null))).isNotEqualTo(encoder.encode(new Mixed("a", 1, null)));
		assertThat(CacheKeyEncoder.of("s", String.class).encode("*")).isEqualTo("\\*");
		assertThat(CacheKeyEncoder.of("l", Long.class).encode(42L)).isEqualTo("42");
	}

	@Test
	void keyTypesWithoutAStableTextFormAreRejectedWhenTheCacheIsCreated() {
		CacheInstance instance = instance(CacheInstance.properties());
		assertThatIllegalArgumentException().isThrownBy(() -> instance.cache("objects", Object.class, Item.class))
			.withMessageContaining("Cache 'objects' cannot use keys of type java.lang.Object");
		assertThatIllegalArgumentException().isThrownBy(() -> instance.cache("nested", Nested.class, Item.class))
			.withMessageContaining("component 'items' is a java.util.List");
		assertThatIllegalArgumentException().isThrownBy(() -> instance.cache("a:b", Long.class, Item.class))
			.withMessageContaining("must consist of letters");
	}

	@Test
	void sameCacheNameWithOtherTypesIsRejected() {
		CacheInstance instance = instance(CacheInstance.properties());
		instance.cache("items", Long.class, Item.class);
		assertThatIllegalArgumentException().isThrownBy(() -> instance.cache("items", String.class, Item.class))
			.withMessageContaining("exists with keys of java.lang.Long");
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), properties));
	}

	record PageKey(long afterId, int size) {
	}

	record Page(List<Item> items, String next) {
	}

	record Renamed(long id, String title) {
	}

	record Reordered(String name, long id) {
	}

	record Extended(long id, String name, boolean soldOut) {
	}

	record Retyped(long id, long name) {
	}

	record Mixed(String text, Integer number, UUID id) {
	}

	record Nested(List<String> items) {
	}

}
