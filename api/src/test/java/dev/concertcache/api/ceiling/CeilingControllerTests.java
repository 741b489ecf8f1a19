package dev.concertcache.api.ceiling;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;

import dev.concertcache.api.ApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;

@ActiveProfiles("ceiling")
class CeilingControllerTests extends ApiTestSupport {

	@Test
	void ceilingReturnsAFixedPageShapedLikeTheList() {
		long before = selectsExecuted();
		Response response = get("/api/ceiling/concerts");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.json().get("items")).hasSize(20);
		assertThat(response.json().get("items").get(0).propertyNames()).containsExactlyInAnyOrder("id", "title",
				"artist", "venue", "startDate", "endDate");
		assertThat(selectsExecuted()).isEqualTo(before);
	}

	@Test
	void ceilingAnswersAConcertAndItsSchedulesShapedLikeTheRealOnesWithoutTheDatabase() {
		long before = selectsExecuted();
		Response concert = get("/api/ceiling/concerts/42");
		Response schedules = get("/api/ceiling/concerts/42/schedules");
		assertThat(concert.status()).isEqualTo(200);
		assertThat(concert.json().get("id").asLong()).isEqualTo(42);
		assertThat(concert.json().propertyNames()).containsExactlyInAnyOrder("id", "title", "artist", "venue",
				"description", "startDate", "endDate", "updatedAt");
		assertThat(schedules.status()).isEqualTo(200);
		assertThat(schedules.json().get("concertId").asLong()).isEqualTo(42);
		assertThat(schedules.json().get("schedules")).hasSize(2);
		assertThat(selectsExecuted()).isEqualTo(before);
	}

}
