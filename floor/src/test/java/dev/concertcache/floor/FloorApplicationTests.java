package dev.concertcache.floor;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "floor.concerts=45")
class FloorApplicationTests {

	private final HttpClient client = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Autowired
	private JsonMapper json;

	@Test
	void theListIsWalkedByCursorThroughEveryConcertOnceInIdOrder() throws Exception {
		long expected = 1;
		String cursor = null;
		do {
			JsonNode page = this.json.readTree(get("/api/concerts?size=20"
					+ ((cursor != null) ? "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8) : ""))
				.body());
			for (JsonNode item : page.get("items")) {
				assertThat(item.get("id").asLong()).isEqualTo(expected++);
				assertThat(item.propertyNames()).containsExactlyInAnyOrder("id", "title", "artist", "venue",
						"startDate", "endDate");
			}
			cursor = page.get("nextCursor").isNull() ? null : page.get("nextCursor").asString();
		}
		while (cursor != null);
		assertThat(expected - 1).isEqualTo(45);
	}

	@Test
	void theDataIsTheApiGeneratorsForTheSameSeed() throws Exception {
		// DataGenerator's first concert for seed 42, as the API serves it after the generate profile.
		JsonNode concert = this.json.readTree(get("/api/concerts/1").body());
		assertThat(concert.propertyNames()).containsExactlyInAnyOrder("id", "title", "artist", "venue", "description",
				"startDate", "endDate", "updatedAt");
		assertThat(concert.get("title").asString()).endsWith(" #1");
		assertThat(concert.get("description").asString())
			.startsWith(concert.get("title").asString() + " at " + concert.get("venue").asString());
		JsonNode schedules = this.json.readTree(get("/api/concerts/1/schedules").body());
		assertThat(schedules.get("concertId").asLong()).isEqualTo(1);
		assertThat(schedules.get("schedules").size()).isBetween(2, 3);
		assertThat(schedules.get("schedules").get(0).propertyNames()).containsExactlyInAnyOrder("id", "startsAt",
				"totalSeats");
	}

	@Test
	void anAlteredCursorABadSizeAndAnUnknownConcertAreClientErrors() throws Exception {
		assertThat(get("/api/concerts?cursor=AQAAAAAAAAAU47qwQHAjqtq5OTL8").statusCode()).isEqualTo(400);
		assertThat(get("/api/concerts?size=101").statusCode()).isEqualTo(400);
		assertThat(get("/api/concerts/46").statusCode()).isEqualTo(404);
		assertThat(get("/api/concerts/46/schedules").statusCode()).isEqualTo(404);
	}

	private HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
