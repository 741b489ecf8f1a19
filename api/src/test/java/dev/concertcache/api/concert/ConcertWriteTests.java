package dev.concertcache.api.concert;

import java.net.http.HttpRequest.BodyPublishers;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.concertcache.api.ApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;

class ConcertWriteTests extends ApiTestSupport {

	private static final String VALID = """
			{"title":"Winter Live","artist":"IU","venue":"KSPO Dome","description":"Three nights",
			 "startDate":"2026-12-24","endDate":"2026-12-26"}""";

	@BeforeEach
	void data() {
		generate(30);
	}

	@Test
	void createReturns201WithLocationAndTheConcertIsReadable() {
		Response created = write("POST", "/api/concerts", VALID);
		assertThat(created.status()).isEqualTo(201);
		long id = created.json().get("id").asLong();
		assertThat(created.location()).endsWith("/api/concerts/" + id);
		assertThat(get("/api/concerts/" + id).json().get("title").asString()).isEqualTo("Winter Live");
	}

	@Test
	void updateReplacesTheFields() {
		Response updated = write("PUT", "/api/concerts/3", VALID.replace("Winter Live", "Spring Live"));
		assertThat(updated.status()).isEqualTo(200);
		assertThat(get("/api/concerts/3").json().get("title").asString()).isEqualTo("Spring Live");
	}

	@Test
	void deleteReturns204AndTakesTheSchedulesWithIt() {
		assertThat(schedulesOf(4)).isPositive();
		assertThat(write("DELETE", "/api/concerts/4", null).status()).isEqualTo(204);
		assertThat(get("/api/concerts/4").status()).isEqualTo(404);
		assertThat(get("/api/concerts/4/schedules").status()).isEqualTo(404);
		assertThat(schedulesOf(4)).isZero();
	}

	@Test
	void writesOfUnknownConcertsAre404() {
		assertThat(write("PUT", "/api/concerts/999", VALID).status()).isEqualTo(404);
		assertThat(write("DELETE", "/api/concerts/999", null).status()).isEqualTo(404);
	}

	@Test
	void writeWithoutTokenIs401AndChangesNothing() {
		Response response = send(request("/api/concerts/3").header("Content-Type", "application/json")
			.PUT(BodyPublishers.ofString(VALID))
			.build());
		assertThat(response.status()).isEqualTo(401);
		assertThat(response.contentType()).startsWith("application/problem+json");
		assertThat(get("/api/concerts/3").json().get("title").asString()).isNotEqualTo("Winter Live");
	}

	@Test
	void writeWithAWrongTokenIs401() {
		Response response = send(request("/api/concerts/3").header("Authorization", "Bearer wrong")
			.method("DELETE", BodyPublishers.noBody())
			.build());
		assertThat(response.status()).isEqualTo(401);
		assertThat(get("/api/concerts/3").status()).isEqualTo(200);
	}

	@Test
	void endBeforeStartIsA400NamingEndDate() {
		assertRejected(VALID.replace("2026-12-26", "2026-12-01"), "endDate");
	}

	@Test
	void overLongTitleIsA400NamingTitle() {
		assertRejected(VALID.replace("Winter Live", "x".repeat(201)), "title");
	}

	@Test
	void missingArtistIsA400NamingArtist() {
		assertRejected(VALID.replace("\"artist\":\"IU\",", ""), "artist");
	}

	@Test
	void malformedDateIsA400NamingStartDate() {
		assertRejected(VALID.replace("2026-12-24", "24.12.2026"), "startDate");
	}

	@Test
	void malformedJsonIsA400() {
		Response response = write("POST", "/api/concerts", "{\"title\": ");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.contentType()).startsWith("application/problem+json");
	}

	@Test
	void wrongContentTypeIsA415() {
		Response response = send(request("/api/concerts").header("Authorization", "Bearer " + TOKEN)
			.header("Content-Type", "text/plain")
			.POST(BodyPublishers.ofString(VALID))
			.build());
		assertThat(response.status()).isEqualTo(415);
		assertThat(response.contentType()).startsWith("application/problem+json");
	}

	private void assertRejected(String body, String field) {
		long before = concerts();
		Response response = write("POST", "/api/concerts", body);
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.contentType()).startsWith("application/problem+json");
		assertThat(response.errorField()).isEqualTo(field);
		assertThat(concerts()).isEqualTo(before);
	}

	private long concerts() {
		return this.jdbc.sql("SELECT COUNT(*) FROM concert").query(Long.class).single();
	}

	private long schedulesOf(long concertId) {
		return this.jdbc.sql("SELECT COUNT(*) FROM schedule WHERE concert_id = ?")
			.param(concertId)
			.query(Long.class)
			.single();
	}

}
