package dev.concertcache.api.cache;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;

import dev.concertcache.api.CachedApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ids are sequential, so a client can read the next id before it exists and the cache keeps that "not found" for
 * {@code absent-ttl}: creating the concert must replace it at once, for the concert and for its schedules.
 */
@ActiveProfiles("cache")
class CreatedConcertTests extends CachedApiTestSupport {

	private static final String CONCERT = """
			{"title":"Next Concert","artist":"IU","venue":"KSPO Dome","description":"Three nights",
			 "startDate":"2026-12-24","endDate":"2026-12-26"}""";

	@Test
	void aConcertCreatedAfterItsIdWasReadAsNotFoundIsServedAtOnceWithItsSchedules() {
		long next = nextConcertId();
		assertThat(get("/api/concerts/" + next).status()).isEqualTo(404);
		assertThat(get("/api/concerts/" + next + "/schedules").status()).isEqualTo(404);

		Response created = write("POST", "/api/concerts", CONCERT);
		assertThat(created.status()).isEqualTo(201);
		assertThat(created.json().get("id").asLong()).as("the id read before").isEqualTo(next);

		Response concert = get("/api/concerts/" + next);
		assertThat(concert.status()).isEqualTo(200);
		assertThat(concert.json().get("title").asString()).isEqualTo("Next Concert");
		Response schedules = get("/api/concerts/" + next + "/schedules");
		assertThat(schedules.status()).isEqualTo(200);
		assertThat(schedules.json().get("schedules").size()).isZero();

		assertThat(write("POST", "/api/concerts/" + next + "/schedules",
				"{\"startsAt\":\"2026-12-24T19:00:00Z\",\"totalSeats\":1200}")
			.status()).isEqualTo(201);
		assertThat(get("/api/concerts/" + next + "/schedules").json().get("schedules").size()).isEqualTo(1);
	}

	/** The id the next insert gets: generated data is deleted and reinserted, so the counter is not 31. */
	private long nextConcertId() {
		return this.jdbc.sql("SELECT AUTO_INCREMENT FROM information_schema.TABLES "
				+ "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'concert'")
			.query(Long.class)
			.single();
	}

}
