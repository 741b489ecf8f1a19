package dev.concertcache.api.concert;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.concertcache.api.ApiTestSupport;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

class ConcertReadTests extends ApiTestSupport {

	private static final int CONCERTS = 250;

	@BeforeEach
	void data() {
		generate(CONCERTS);
	}

	@Test
	void firstPageHasTwentyConcertsInIdOrderAndACursor() {
		Response response = get("/api/concerts");
		assertThat(response.status()).isEqualTo(200);
		JsonNode page = response.json();
		assertThat(page.get("items")).hasSize(20);
		assertThat(page.get("items").get(0).get("id").asLong()).isEqualTo(1);
		assertThat(page.get("items").get(19).get("id").asLong()).isEqualTo(20);
		assertThat(page.get("items").get(0).propertyNames()).contains("id", "title", "artist", "venue", "startDate",
				"endDate");
		assertThat(page.get("nextCursor").asString()).isNotBlank();
	}

	@Test
	void pagingThroughVisitsEveryConcertOnceAndEndsWithANullCursor() {
		List<Long> seen = new ArrayList<>();
		String cursor = "";
		int pages = 0;
		while (cursor != null) {
			JsonNode page = get("/api/concerts?size=100&cursor=" + cursor).json();
			page.get("items").forEach((item) -> seen.add(item.get("id").asLong()));
			cursor = page.get("nextCursor").isNull() ? null : page.get("nextCursor").asString();
			pages++;
		}
		assertThat(pages).isEqualTo(3);
		assertThat(seen).hasSize(CONCERTS).doesNotHaveDuplicates().isSorted();
	}

	@Test
	void aPageCostsOneQueryAtAnyDepth() {
		String cursor = get("/api/concerts?size=100").json().get("nextCursor").asString();
		long before = selectsExecuted();
		assertThat(get("/api/concerts?size=100&cursor=" + cursor).status()).isEqualTo(200);
		assertThat(selectsExecuted() - before).isEqualTo(1);
	}

	@Test
	void detailReturnsTheConcertWithItsDescription() {
		Response response = get("/api/concerts/7");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.json().get("id").asLong()).isEqualTo(7);
		assertThat(response.json().get("description").asString()).contains("nights");
	}

	@Test
	void detailOfAnUnknownConcertIsA404Problem() {
		Response response = get("/api/concerts/999999");
		assertThat(response.status()).isEqualTo(404);
		assertThat(response.contentType()).startsWith("application/problem+json");
		assertThat(response.json().get("detail").asString()).isEqualTo("concert 999999 does not exist");
	}

	@Test
	void sizeOutsideOneToHundredIsA400NamingSize() {
		for (String size : List.of("0", "101", "-5")) {
			Response response = get("/api/concerts?size=" + size);
			assertThat(response.status()).as("size=%s", size).isEqualTo(400);
			assertThat(response.contentType()).startsWith("application/problem+json");
			assertThat(response.errorField()).isEqualTo("size");
		}
	}

	@Test
	void nonNumericSizeIsA400NamingSize() {
		Response response = get("/api/concerts?size=ten");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.errorField()).isEqualTo("size");
	}

	@Test
	void malformedCursorIsA400NamingCursor() {
		Response response = get("/api/concerts?cursor=not*a*cursor");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.errorField()).isEqualTo("cursor");
	}

	@Test
	void tamperedCursorIsA400NamingCursor() {
		String cursor = get("/api/concerts").json().get("nextCursor").asString();
		char[] chars = cursor.toCharArray();
		// Change one character of the encoded id (byte 1..8) and keep the signature.
		chars[3] = (chars[3] == 'A') ? 'B' : 'A';
		Response response = get("/api/concerts?cursor=" + new String(chars));
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.errorField()).isEqualTo("cursor");
		assertThat(response.json().get("detail").asString()).contains("altered");
	}

	@Test
	void nonNumericIdIsA400NamingId() {
		Response response = get("/api/concerts/abc");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.errorField()).isEqualTo("id");
	}

}
