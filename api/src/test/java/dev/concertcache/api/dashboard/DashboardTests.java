package dev.concertcache.api.dashboard;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;


import dev.concertcache.api.ApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The built-in dashboard is served by the management server only, and its page loads nothing from another
 * host (ADR 0110). What it shows is tested in a real browser by {@code ops/dashboard}.
 */
class DashboardTests extends ApiTestSupport {

	private static final List<String> ASSETS = List.of("/dashboard", "/dashboard/dashboard.js",
			"/dashboard/dashboard.css");

	private static final Pattern ABSOLUTE_URL = Pattern.compile("(?i)https?://([^/\\s\"'<>)`]*)");

	private static final HttpClient http = HttpClient.newHttpClient();

	@Test
	void pageIsServedOnTheManagementPort() throws Exception {
		HttpResponse<String> page = fromManagementPort("/dashboard");
		assertThat(page.statusCode()).isEqualTo(200);
		assertThat(MediaType.parseMediaType(page.headers().firstValue("Content-Type").orElseThrow()))
			.isEqualTo(new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8));
		assertThat(page.body()).contains("<script src=\"dashboard/dashboard.js\"")
			.contains("<link rel=\"stylesheet\" href=\"dashboard/dashboard.css\">")
			.contains("<meta name=\"metrics-path\" content=\"actuator/prometheus\">")
			.contains("data-metric=\"hit-ratio-overall\"")
			.contains("data-metric=\"requests-rate\"")
			.contains("data-spark=\"hit-ratio-overall\"")
			.contains("data-metric=\"capture-leader\"")
			.contains("data-metric=\"capture-events-rate\"")
			.contains("data-metric=\"capture-lag-p50\"")
			.contains("data-metric=\"capture-lag-p99\"")
			.contains("data-metric=\"capture-reconnects\"")
			.contains("data-metric=\"capture-position-lost-since-load\"");
	}

	@Test
	void assetsAreServedOnTheManagementPort() throws Exception {
		HttpResponse<String> script = fromManagementPort("/dashboard/dashboard.js");
		assertThat(script.statusCode()).isEqualTo(200);
		assertThat(script.headers().firstValue("Content-Type")).hasValue("text/javascript;charset=UTF-8");
		// The capture's meters as Prometheus names them (asserted against a capturing instance in CaptureTests).
		assertThat(script.body()).contains("function parseExposition")
			.contains("'concert_cache_capture_events_total'")
			.contains("'concert_cache_capture_lag_seconds_bucket'")
			.contains("'concert_cache_capture_reconnects_total'")
			.contains("'concert_cache_capture_position_lost_total'")
			.contains("'concert_cache_capture_leader'");
		HttpResponse<String> styles = fromManagementPort("/dashboard/dashboard.css");
		assertThat(styles.statusCode()).isEqualTo(200);
		assertThat(styles.headers().firstValue("Content-Type")).hasValue("text/css;charset=UTF-8");
	}

	@Test
	void dashboardIsNotOnThePublicPort() {
		for (String path : ASSETS) {
			assertThat(get(path).status()).as(path).isEqualTo(404);
		}
		assertThat(get("/dashboard/").status()).isEqualTo(404);
	}

	@Test
	void pageAndAssetsReferenceNoOtherHost() throws Exception {
		for (String path : ASSETS) {
			HttpResponse<String> asset = fromManagementPort(path);
			Matcher url = ABSOLUTE_URL.matcher(asset.body());
			while (url.find()) {
				assertThat(url.group(1)).as("%s links to %s", path, url.group())
					.matches("(localhost|127\\.0\\.0\\.1)(:\\d+)?");
			}
			assertThat(asset.body()).as(path).doesNotContainPattern("(?i)(src|href)\\s*=\\s*\"//")
				.doesNotContainPattern("(?i)@import")
				.doesNotContainPattern("(?i)url\\(\\s*['\"]?//");
			assertThat(asset.headers().firstValue("Content-Security-Policy")).as(path)
				.hasValueSatisfying((policy) -> assertThat(policy).contains("default-src 'none'")
					.contains("script-src 'self'")
					.contains("connect-src 'self'"));
			assertThat(asset.headers().firstValue("X-Content-Type-Options")).as(path).hasValue("nosniff");
		}
	}

	@Test
	void trailingSlashRedirectsToThePage() throws Exception {
		HttpResponse<String> response = fromManagementPort("/dashboard/");
		assertThat(response.statusCode()).isEqualTo(301);
		assertThat(response.headers().firstValue("Location")).hasValue("../dashboard");
	}

	@Test
	void prometheusEndpointHasWhatThePageReads() throws Exception {
		assertThat(get("/api/concerts?size=1").status()).isEqualTo(200);
		HttpResponse<String> metrics = fromManagementPort("/actuator/prometheus");
		assertThat(metrics.statusCode()).isEqualTo(200);
		assertThat(metrics.body()).contains("http_server_requests_seconds_bucket{")
			.contains("uri=\"/api/concerts\"")
			.contains("http_server_requests_seconds_count{")
			.contains("hikaricp_connections_pending{");
	}

	private HttpResponse<String> fromManagementPort(String path) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.managementPort + path)).build(),
				BodyHandlers.ofString());
	}

}
