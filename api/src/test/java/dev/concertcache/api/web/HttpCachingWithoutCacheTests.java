package dev.concertcache.api.web;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.concertcache.api.ApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without a cache (mode {@code none}, the baseline) there is no cached value to tag or describe: reads answer as a
 * plain endpoint does, and the OpenAPI document still describes the caching headers of the cache modes.
 */
class HttpCachingWithoutCacheTests extends ApiTestSupport {

	@BeforeEach
	void data() {
		generate(30);
	}

	@Test
	void readsCarryNoETagNorCacheStatus() {
		Response concert = get("/api/concerts/3");
		assertThat(concert.status()).isEqualTo(200);
		assertThat(concert.header("ETag")).isNull();
		assertThat(concert.header("Cache-Status")).isNull();
	}

	@Test
	void theOpenApiDocumentDescribesTheCachingHeadersAnd304() {
		var docs = get("/v3/api-docs").json();
		for (String path : new String[] { "~1api~1concerts", "~1api~1concerts~1{id}",
				"~1api~1concerts~1{concertId}~1schedules" }) {
			var responses = docs.at("/paths/" + path + "/get/responses");
			assertThat(responses.propertyNames()).as(responses.toString()).contains("200", "304");
			assertThat(responses.at("/200/headers").propertyNames()).contains("ETag", "Cache-Control", "Cache-Status");
			assertThat(responses.at("/200/content").toString()).as("the body's schema").contains("\"$ref\"");
			assertThat(responses.at("/304/content").isMissingNode()).as("304 has no body").isTrue();
		}
	}

}
