package dev.concertcache.api.cache;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

import dev.concertcache.api.CachedApiTestSupport;
import dev.concertcache.tiered.support.DefaultTieredCacheManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The list is cached in blocks of consecutive ids and pages are put together from them (ADR 0036): every size pages
 * through every concert once across blocks, a write makes stale only its block and the end of the list, and a
 * crawler that varies sizes and cursors puts no more keys into Redis than there are blocks.
 */
@ActiveProfiles("cache")
// Capture off: these writes are invalidated by the writing instance alone, not repaired by the binary log.
@TestPropertySource(properties = { "concert-cache.list.block-size=" + ListBlocksTests.BLOCK_SIZE,
		"concert-cache.capture.mode=off" })
class ListBlocksTests extends CachedApiTestSupport {

	static final int BLOCK_SIZE = 4;

	private static final int[] SIZES = { 1, 2, 3, 4, 5, 7, 13, 19, 20, 21, 33, 64, 99, 100 };

	@Value("${tiered-cache.key-prefix}")
	private String keyPrefix;

	@Autowired
	private StringRedisTemplate redis;

	@Test
	void aCrawlOverManySizesAndCursorsPagesThroughEveryConcertOnceAndKeepsOneKeyPerBlockInRedis() {
		List<Long> everyId = new ArrayList<>();
		List<String> cursors = new ArrayList<>();
		cursors.add("");
		for (int size : SIZES) {
			List<Long> ids = new ArrayList<>();
			String cursor = "";
			do {
				JsonNode page = page(cursor, size);
				assertThat(page.get("items").size()).isLessThanOrEqualTo(size);
				page.get("items").forEach((item) -> ids.add(item.get("id").asLong()));
				cursor = page.get("nextCursor").isNull() ? null : page.get("nextCursor").asString();
				if (size == 1 && cursor != null) {
					cursors.add(cursor);
				}
			}
			while (cursor != null);
			if (everyId.isEmpty()) {
				everyId.addAll(ids);
			}
			assertThat(ids).as("ids paged through with size %d", size).isEqualTo(everyId);
		}
		assertThat(everyId).hasSize(30);
		int requests = 0;
		for (String cursor : cursors) {
			for (int size : SIZES) {
				page(cursor, size);
				requests++;
			}
		}

		assertThat(listKeys()).as("list keys after %d requests with %d sizes", requests, SIZES.length)
			.hasSize((30 + BLOCK_SIZE - 1) / BLOCK_SIZE + 1);
	}

	@Test
	void aWriteOfOneConcertLeavesThePagesOfOtherBlocksCachedAndShowsOnItsOwnPageAtOnce() {
		String after20 = page("", 20).get("nextCursor").asString();
		assertThat(ids(page(after20, BLOCK_SIZE))).containsExactly(21L, 22L, 23L, 24L);
		assertThat(ids(page("", BLOCK_SIZE))).containsExactly(1L, 2L, 3L, 4L);

		assertThat(write("PUT", "/api/concerts/3", """
				{"title":"Renamed","artist":"a","venue":"v","startDate":"2026-01-01","endDate":"2026-01-02"}""")
			.status()).isEqualTo(200);

		long before = selectsExecuted();
		assertThat(ids(page(after20, BLOCK_SIZE))).containsExactly(21L, 22L, 23L, 24L);
		assertThat(selectsExecuted() - before).as("selects: the end of the list, not the block").isEqualTo(1);
		before = selectsExecuted();
		assertThat(page("", BLOCK_SIZE).get("items").get(2).get("title").asString()).isEqualTo("Renamed");
		assertThat(selectsExecuted() - before).as("selects: the block of concert 3").isEqualTo(1);
	}

	@Test
	void aConcertAddedAtTheEndIsOnTheLastPageAndADeletedOneIsGoneAtOnce() {
		String after20 = page("", 20).get("nextCursor").asString();
		assertThat(ids(page(after20, 20))).hasSize(10).endsWith(30L);

		Response added = write("POST", "/api/concerts", """
				{"title":"Added","artist":"a","venue":"v","startDate":"2026-01-01","endDate":"2026-01-02"}""");
		assertThat(added.status()).isEqualTo(201);
		long id = added.json().get("id").asLong();
		JsonNode last = page(after20, 20);
		assertThat(ids(last)).hasSize(11).endsWith(id);
		assertThat(last.get("nextCursor").isNull()).isTrue();
		assertThat(page(after20, 10).get("nextCursor").isNull()).as("a full page before the new end").isFalse();

		assertThat(write("DELETE", "/api/concerts/" + id, null).status()).isEqualTo(204);
		assertThat(write("DELETE", "/api/concerts/25", null).status()).isEqualTo(204);
		assertThat(ids(page(after20, 20))).hasSize(9).doesNotContain(25L).endsWith(30L);
		assertThat(page(after20, 9).get("nextCursor").isNull()).as("the old end is the end again").isTrue();
	}

	@Test
	void aGapOfUnusedIdsWiderThanAPageMayWalkIsReadFromTheDatabaseEveryTime() {
		this.jdbc.sql("DELETE FROM concert WHERE id BETWEEN 2 AND 30").update();
		this.jdbc.sql("""
				INSERT INTO concert (id, title, artist, venue, description, start_date, end_date, created_at, updated_at)
				VALUES (1000, 'Far', 'a', 'v', '', '2026-01-01', '2026-01-02', NOW(), NOW())""").update();
		((DefaultTieredCacheManager) this.caches).evictAllCaches();

		assertThat(ids(page("", 2))).containsExactly(1L, 1000L);
		long before = selectsExecuted();
		JsonNode again = page("", 2);
		assertThat(ids(again)).containsExactly(1L, 1000L);
		assertThat(again.get("nextCursor").isNull()).isTrue();
		assertThat(selectsExecuted() - before).as("the page's own query; the walk stopped at the gap").isEqualTo(1);
	}

	private JsonNode page(String cursor, int size) {
		return get("/api/concerts?size=" + size
				+ (cursor.isEmpty() ? "" : "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8))).json();
	}

	private static List<Long> ids(JsonNode page) {
		List<Long> ids = new ArrayList<>();
		page.get("items").forEach((item) -> ids.add(item.get("id").asLong()));
		return ids;
	}

	/** The value keys of the list's blocks and its end in their caches' current generations. */
	private Set<String> listKeys() {
		// This application's keys: other test classes share the Redis under prefixes of their own.
		Set<String> keys = new TreeSet<>();
		for (String cache : List.of("concert-list", "concert-list-end")) {
			String prefix = this.keyPrefix + ":v1:" + cache;
			String generation = this.redis.opsForValue().get(prefix + ":generation");
			assertThat(generation).isNotNull();
			keys.addAll(this.redis.keys(prefix + ":g" + generation + ":*"));
		}
		return keys;
	}

}
