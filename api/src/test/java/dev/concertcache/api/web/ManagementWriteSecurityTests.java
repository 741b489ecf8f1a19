package dev.concertcache.api.web;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import dev.concertcache.api.ApiTestSupport;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With every actuator endpoint exposed, each write on the management port needs the admin token and each read
 * stays open to probes and scrapes (ADR 0004). The loggers endpoint stands for "anything else exposed": a level
 * change is a write like clearing the caches ({@code CachesEndpointTests} covers those).
 */
@TestPropertySource(properties = "management.endpoints.web.exposure.include=*")
class ManagementWriteSecurityTests extends ApiTestSupport {

	private static final String LOGGER = "/actuator/loggers/dev.concertcache.api.web";

	@AfterEach
	void resetTheLevel() {
		assertThat(post(LOGGER, "{}", TOKEN).status()).isEqualTo(204);
	}

	@Test
	void changingALogLevelWithoutTheTokenIs401AndChangesNothing() {
		Response refused = post(LOGGER, "{\"configuredLevel\":\"TRACE\"}", null);

		assertThat(refused.status()).isEqualTo(401);
		assertThat(refused.contentType()).startsWith("application/problem+json");
		assertThat(refused.json().get("instance").asString()).isEqualTo(LOGGER);
		assertThat(configuredLevel()).isNull();
	}

	@Test
	void changingALogLevelWithAWrongTokenIs401() {
		assertThat(post(LOGGER, "{\"configuredLevel\":\"TRACE\"}", "not-the-" + TOKEN).status()).isEqualTo(401);
		assertThat(configuredLevel()).isNull();
	}

	@Test
	void changingALogLevelWithTheTokenWorks() {
		assertThat(post(LOGGER, "{\"configuredLevel\":\"TRACE\"}", TOKEN).status()).isEqualTo(204);
		assertThat(configuredLevel()).isEqualTo("TRACE");
	}

	@Test
	void probesAndScrapesNeedNoToken() {
		assertThat(management("/actuator/health").status()).isEqualTo(200);
		assertThat(management("/actuator/health/liveness").status()).isEqualTo(200);
		assertThat(management("/actuator/health/readiness").status()).isEqualTo(200);
		assertThat(management("/actuator/prometheus").status()).isEqualTo(200);
	}

	/** The level set through the endpoint; the actuator leaves the field out while none is. */
	private String configuredLevel() {
		JsonNode level = management(LOGGER).json().get("configuredLevel");
		return (level == null || level.isNull()) ? null : level.asString();
	}

	private Response post(String path, String body, String token) {
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.managementPort + path))
			.header("Content-Type", "application/json")
			.POST(BodyPublishers.ofString(body));
		if (token != null) {
			request.header("Authorization", "Bearer " + token);
		}
		return send(request.build());
	}

}
