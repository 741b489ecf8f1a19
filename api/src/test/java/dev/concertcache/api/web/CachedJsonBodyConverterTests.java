package dev.concertcache.api.web;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.ActiveProfiles;

import dev.concertcache.api.CachedApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Under the {@code cache} profile, a response served from L1 is written from bytes serialized once per
 * cached instance, and they are the bytes Jackson writes.
 */
@ActiveProfiles("cache")
class CachedJsonBodyConverterTests extends CachedApiTestSupport {

	@Autowired
	private CachedJsonBodyConverter converter;

	@Test
	void repeatedHitsAreWrittenFromOneSerialization() {
		Response first = get("/api/concerts/5/schedules");
		long serializations = this.converter.serializations();
		for (int i = 0; i < 10; i++) {
			assertThat(get("/api/concerts/5/schedules").body()).isEqualTo(first.body());
		}
		assertThat(this.converter.serializations()).isEqualTo(serializations);
	}

	@Test
	void theBytesAreJacksonsAndTheContentTypeIsJson() {
		Response response = get("/api/concerts/5");
		assertThat(response.contentType()).startsWith("application/json");
		assertThat(response.json().get("id").asLong()).isEqualTo(5);
		assertThat(response.body()).startsWith("{\"id\":5,\"title\":");
	}

	@Test
	void aWriteIsServedFromNewBytes() {
		get("/api/concerts/6");
		long serializations = this.converter.serializations();
		write("PUT", "/api/concerts/6", """
				{"title":"Renamed","artist":"IU","venue":"KSPO Dome","startDate":"2026-12-24","endDate":"2026-12-26"}""");
		assertThat(get("/api/concerts/6").json().get("title").asString()).isEqualTo("Renamed");
		assertThat(this.converter.serializations()).isGreaterThan(serializations);
	}

}
