package dev.concertcache.api.web;


import org.junit.jupiter.api.Test;


import dev.concertcache.api.ApiTestSupport;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

class HttpContractTests extends ApiTestSupport {

	@Test
	void unknownRouteIsA404Problem() {
		Response response = get("/api/nothing-here");
		assertThat(response.status()).isEqualTo(404);
		assertThat(response.contentType()).startsWith("application/problem+json");
	}

	@Test
	void unsupportedMethodIsA405Problem() {
		Response response = write("PATCH", "/api/concerts/1", "{}");
		assertThat(response.status()).isEqualTo(405);
		assertThat(response.contentType()).startsWith("application/problem+json");
	}

	@Test
	void openApiDocumentListsEveryEndpoint() {
		Response response = get("/v3/api-docs");
		assertThat(response.status()).isEqualTo(200);
		JsonNode paths = response.json().get("paths");
		assertThat(paths.propertyNames()).containsExactlyInAnyOrder("/api/concerts", "/api/concerts/{id}",
				"/api/concerts/{concertId}/schedules", "/api/concerts/{concertId}/schedules/{scheduleId}",
				"/api/cache/invalidations");
		assertThat(paths.get("/api/concerts").propertyNames()).containsExactlyInAnyOrder("get", "post");
		assertThat(paths.get("/api/concerts/{id}").propertyNames()).containsExactlyInAnyOrder("get", "put", "delete");
		assertThat(paths.get("/api/concerts/{concertId}/schedules/{scheduleId}").propertyNames())
			.containsExactlyInAnyOrder("put", "delete");
	}

	@Test
	void actuatorIsOnTheManagementPortOnly() {
		get("/api/concerts/1");
		assertThat(management("/actuator/health/liveness").body()).contains("\"status\":\"UP\"");
		assertThat(management("/actuator/prometheus").body()).contains("http_server_requests_seconds");
		assertThat(management("/actuator/env").body()).doesNotContain("propertySources");
		assertThat(get("/actuator/health").status()).isEqualTo(404);
	}

	@Test
	void requestsAreTimedWithoutALongTaskTimerPerRequest() {
		get("/api/concerts/1");
		String metrics = management("/actuator/prometheus").body();
		assertThat(metrics).contains("http_server_requests_seconds_bucket");
		assertThat(metrics).doesNotContain("http_server_requests_active");
	}

}
