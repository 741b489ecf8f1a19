package dev.concertcache.api.schedule;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.concertcache.api.ApiTestSupport;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

class ScheduleTests extends ApiTestSupport {

	@BeforeEach
	void data() {
		generate(20);
	}

	@Test
	void schedulesAreOrderedByStartTime() {
		write("POST", "/api/concerts/5/schedules", "{\"startsAt\":\"2020-01-01T10:00:00Z\",\"totalSeats\":100}");
		Response response = get("/api/concerts/5/schedules");
		assertThat(response.status()).isEqualTo(200);
		JsonNode body = response.json();
		assertThat(body.get("concertId").asLong()).isEqualTo(5);
		List<Instant> startTimes = new ArrayList<>();
		body.get("schedules").forEach((s) -> startTimes.add(Instant.parse(s.get("startsAt").asString())));
		assertThat(startTimes).hasSizeGreaterThanOrEqualTo(3).isSorted();
		assertThat(startTimes.get(0)).isEqualTo(Instant.parse("2020-01-01T10:00:00Z"));
		assertThat(body.get("schedules").get(0).propertyNames()).contains("id", "startsAt", "totalSeats");
	}

	@Test
	void schedulesOfAConcertWithoutPerformancesAreEmpty() {
		long id = write("POST", "/api/concerts", """
				{"title":"t","artist":"a","venue":"v","startDate":"2026-01-01","endDate":"2026-01-01"}""").json()
			.get("id")
			.asLong();
		Response response = get("/api/concerts/" + id + "/schedules");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.json().get("schedules")).isEmpty();
	}

	@Test
	void schedulesOfAnUnknownConcertAreA404() {
		assertThat(get("/api/concerts/424242/schedules").status()).isEqualTo(404);
	}

	@Test
	void schedulesCostOneQuery() {
		long before = selectsExecuted();
		assertThat(get("/api/concerts/6/schedules").status()).isEqualTo(200);
		assertThat(selectsExecuted() - before).isEqualTo(1);
	}

	@Test
	void createUpdateAndDeleteASchedule() {
		Response created = write("POST", "/api/concerts/2/schedules",
				"{\"startsAt\":\"2026-05-01T11:00:00Z\",\"totalSeats\":300}");
		assertThat(created.status()).isEqualTo(201);
		long id = created.json().get("id").asLong();
		assertThat(created.location()).endsWith("/api/concerts/2/schedules/" + id);

		Response updated = write("PUT", "/api/concerts/2/schedules/" + id,
				"{\"startsAt\":\"2026-05-02T11:00:00Z\",\"totalSeats\":350}");
		assertThat(updated.status()).isEqualTo(200);
		assertThat(updated.json().get("totalSeats").asInt()).isEqualTo(350);
		assertThat(updated.json().get("startsAt").asString()).isEqualTo("2026-05-02T11:00:00Z");

		assertThat(write("DELETE", "/api/concerts/2/schedules/" + id, null).status()).isEqualTo(204);
		assertThat(write("DELETE", "/api/concerts/2/schedules/" + id, null).status()).isEqualTo(404);
	}

	@Test
	void aScheduleOfAnotherConcertIsNotFoundAndUnchanged() {
		long otherConcertsSchedule = this.jdbc.sql("SELECT MIN(id) FROM schedule WHERE concert_id = 3")
			.query(Long.class)
			.single();
		Response response = write("PUT", "/api/concerts/2/schedules/" + otherConcertsSchedule,
				"{\"startsAt\":\"2026-05-02T11:00:00Z\",\"totalSeats\":350}");
		assertThat(response.status()).isEqualTo(404);
		assertThat(this.jdbc.sql("SELECT total_seats FROM schedule WHERE id = ?")
			.param(otherConcertsSchedule)
			.query(Integer.class)
			.single()).isNotEqualTo(350);
	}

	@Test
	void aScheduleForAnUnknownConcertIsA404AndNoRow() {
		Response response = write("POST", "/api/concerts/999/schedules",
				"{\"startsAt\":\"2026-05-01T11:00:00Z\",\"totalSeats\":300}");
		assertThat(response.status()).isEqualTo(404);
		assertThat(this.jdbc.sql("SELECT COUNT(*) FROM schedule WHERE concert_id = 999").query(Long.class).single())
			.isZero();
	}

	@Test
	void negativeSeatsAreA400NamingTotalSeats() {
		Response response = write("POST", "/api/concerts/2/schedules",
				"{\"startsAt\":\"2026-05-01T11:00:00Z\",\"totalSeats\":-1}");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.errorField()).isEqualTo("totalSeats");
	}

	@Test
	void missingStartTimeIsA400NamingStartsAt() {
		Response response = write("POST", "/api/concerts/2/schedules", "{\"totalSeats\":10}");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.errorField()).isEqualTo("startsAt");
	}

	@Test
	void seatsAsTextAreA400NamingTotalSeats() {
		Response response = write("POST", "/api/concerts/2/schedules",
				"{\"startsAt\":\"2026-05-01T11:00:00Z\",\"totalSeats\":\"many\"}");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.errorField()).isEqualTo("totalSeats");
	}

}
