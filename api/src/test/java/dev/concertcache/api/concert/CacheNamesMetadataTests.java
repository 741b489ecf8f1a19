package dev.concertcache.api.concert;

import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.concertcache.api.schedule.ScheduleCaches;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The API's configuration metadata offers its own cache names as the keys of {@code tiered-cache.caches}; the
 * library's metadata names none (an IDE merges both).
 */
class CacheNamesMetadataTests {

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	@Test
	void theApisMetadataHintsEachCacheItDeclaresAsAKeyOfTieredCacheCaches() throws Exception {
		List<String> hinted = new ArrayList<>();
		for (URL url : Collections.list(getClass().getClassLoader().getResources(METADATA))) {
			try (InputStream in = url.openStream()) {
				for (JsonNode hint : JsonMapper.builder().build().readTree(in).path("hints")) {
					if (hint.path("name").asString().equals("tiered-cache.caches.keys")) {
						hint.path("values").forEach((value) -> hinted.add(value.path("value").asString()));
					}
				}
			}
		}
		assertThat(hinted).containsExactlyInAnyOrder(ConcertCaches.CONCERT, ConcertCaches.LIST, ConcertCaches.LIST_END,
				ScheduleCaches.SCHEDULES);
	}

}
