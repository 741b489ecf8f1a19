package dev.concertcache.api.cache;

import java.net.URI;
import java.net.http.HttpRequest;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.ActiveProfiles;

import dev.concertcache.api.CachedApiTestSupport;
import dev.concertcache.api.web.CacheStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /actuator/caches} on the management port lists the tiered caches and clears them on every tier, and
 * Prometheus shows Micrometer's standard {@code cache_*} meters beside the per-tier ones (ADR 0016, ADR 0015).
 * The endpoint is not on the public port (ADR 0110), and clearing needs the admin token even on the management
 * port (ADR 0004): reaching the port is not enough to send every read to the database.
 */
@ActiveProfiles("cache")
class CachesEndpointTests extends CachedApiTestSupport {

	@Autowired
	private MeterRegistry meters;

	@Test
	void theEndpointListsTheCachesOfTheTieredManager() {
		Response caches = management("/actuator/caches");
		assertThat(caches.status()).isEqualTo(200);
		var listed = caches.json().get("cacheManagers").get("cacheManager").get("caches");
		assertThat(listed.propertyNames()).containsExactlyInAnyOrder("concert", "concert-list", "concert-list-end",
				"schedules");
		assertThat(listed.get("concert").get("target").asString()).startsWith("dev.concertcache.tiered.");
	}

	@Test
	void clearingACacheThroughTheEndpointMakesTheNextReadLoadAgain() {
		assertThat(get("/api/concerts/4").header("Cache-Status")).isEqualTo(CacheStatus.MISS);
		assertThat(get("/api/concerts/4").header("Cache-Status")).isEqualTo(CacheStatus.HIT_L1);

		assertThat(managementDelete("/actuator/caches/concert", TOKEN).status()).isEqualTo(204);

		long selects = selectsExecuted();
		assertThat(get("/api/concerts/4").header("Cache-Status")).isEqualTo(CacheStatus.MISS);
		assertThat(selectsExecuted() - selects).isOne();
	}

	@Test
	void clearingEveryCacheThroughTheEndpointEmptiesEachOfThem() {
		get("/api/concerts/5");
		get("/api/concerts/5/schedules");

		assertThat(managementDelete("/actuator/caches", TOKEN).status()).isEqualTo(204);

		assertThat(get("/api/concerts/5").header("Cache-Status")).isEqualTo(CacheStatus.MISS);
		assertThat(get("/api/concerts/5/schedules").header("Cache-Status")).isEqualTo(CacheStatus.MISS);
	}

	@Test
	void clearingEveryCacheWithoutTheTokenIs401AndClearsNothing() {
		get("/api/concerts/7");
		assertThat(get("/api/concerts/7").header("Cache-Status")).isEqualTo(CacheStatus.HIT_L1);

		Response refused = managementDelete("/actuator/caches", null);

		assertThat(refused.status()).isEqualTo(401);
		assertThat(refused.contentType()).startsWith("application/problem+json");
		assertThat(refused.header("WWW-Authenticate")).startsWith("Bearer");
		assertThat(refused.json().get("status").asInt()).isEqualTo(401);
		long selects = selectsExecuted();
		assertThat(get("/api/concerts/7").header("Cache-Status")).isEqualTo(CacheStatus.HIT_L1);
		assertThat(selectsExecuted()).isEqualTo(selects);
	}

	@Test
	void clearingOneCacheWithAWrongTokenIs401AndClearsNothing() {
		get("/api/concerts/8");

		assertThat(managementDelete("/actuator/caches/concert", "not-the-" + TOKEN).status()).isEqualTo(401);

		assertThat(get("/api/concerts/8").header("Cache-Status")).isEqualTo(CacheStatus.HIT_L1);
	}

	@Test
	void theEndpointIsNotOnThePublicPort() {
		assertThat(get("/actuator/caches").status()).isEqualTo(404);
	}

	@Test
	void prometheusCountsGetsPutsAndSizeUnderMicrometersStandardNames() {
		double hits = standard("cache.gets", "hit");
		double misses = standard("cache.gets", "miss");
		double puts = standard("cache.puts", null);

		get("/api/concerts/6");
		get("/api/concerts/6");
		get("/api/concerts/6");

		assertThat(standard("cache.gets", "hit") - hits).isEqualTo(2);
		assertThat(standard("cache.gets", "miss") - misses).isEqualTo(1);
		assertThat(standard("cache.puts", null) - puts).isEqualTo(1);
		assertThat(this.meters.get("cache.size").tags("cache", "concert").gauge().value()).isEqualTo(1);
		String tags = "cache=\"concert\",cache_manager=\"cacheManager\",name=\"concert\"";
		assertThat(management("/actuator/prometheus").body())
			.containsPattern("cache_gets_total\\{" + tags + ",result=\"hit\"} [1-9]")
			.containsPattern("cache_gets_total\\{" + tags + ",result=\"miss\"} [1-9]")
			.containsPattern("cache_puts_total\\{" + tags + "} [1-9]")
			.containsPattern("cache_evictions_total\\{" + tags + "} \\d")
			.contains("cache_size{" + tags + "} 1.0")
			.containsPattern("tiered_cache_gets_total\\{.*cache=\"concert\",result=\"hit\",tier=\"l1\"} [1-9]");
	}

	private double standard(String name, String result) {
		var search = this.meters.get(name).tags("cache", "concert", "cache.manager", "cacheManager");
		return ((result != null) ? search.tag("result", result) : search).functionCounter().count();
	}

	private Response managementDelete(String path, String token) {
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.managementPort + path))
			.DELETE();
		if (token != null) {
			request.header("Authorization", "Bearer " + token);
		}
		return send(request.build());
	}

}
