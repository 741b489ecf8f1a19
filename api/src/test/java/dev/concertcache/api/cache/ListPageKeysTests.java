package dev.concertcache.api.cache;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.ActiveProfiles;

import dev.concertcache.api.CachedApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A crawler that varies the page size and replays every cursor it was given puts at most two keys per start into
 * Redis, not one per size (issue 14, hole 11), and every size still pages through every concert exactly once.
 */
@ActiveProfiles("cache")
class ListPageKeysTests extends CachedApiTestSupport {

	private static final int[] SIZES = { 1, 2, 3, 5, 7, 13, 19, 20, 21, 33, 64, 99, 100 };

	@Value("${tiered-cache.key-prefix}")
	private String keyPrefix;

	@Autowired
	private StringRedisTemplate redis;

	@Test
	void aCrawlOverManySizesAndCursorsKeepsTheListKeysInRedisBoundedByTheCursors() {
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

		// At most one key per start for each of the two cached sizes, whatever the number of sizes asked for.
		assertThat(pageKeys()).as("list keys after %d requests with %d sizes", requests, SIZES.length)
			.hasSizeLessThanOrEqualTo(2 * cursors.size());
	}

	private JsonNode page(String cursor, int size) {
		return get("/api/concerts?size=" + size
				+ (cursor.isEmpty() ? "" : "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8))).json();
	}

	/** The value keys of the list cache's current generation. */
	private Set<String> pageKeys() {
		// This application's keys: other test classes share the Redis under prefixes of their own.
		String cache = this.keyPrefix + ":v1:concert-page";
		String generation = this.redis.opsForValue().get(cache + ":generation");
		assertThat(generation).isNotNull();
		return this.redis.keys(cache + ":g" + generation + ":*");
	}

}
