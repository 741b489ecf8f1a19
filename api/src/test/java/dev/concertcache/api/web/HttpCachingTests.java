package dev.concertcache.api.web;

import java.net.URI;
import java.net.http.HttpRequest;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.ActiveProfiles;

import dev.concertcache.api.ApiApplication;
import dev.concertcache.api.CachedApiTestSupport;
import dev.concertcache.testsupport.MariaDbServer;
import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCacheManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * HTTP caching of the cached reads under the {@code cache} profile, over real HTTP (ADR 0034): a strong ETag made
 * once per cached value, 304 on a matching If-None-Match, Cache-Control per cache and Cache-Status per tier.
 */
@ActiveProfiles("cache")
class HttpCachingTests extends CachedApiTestSupport {

	private static final String CONCERT = "/api/concerts/3";

	private static final String PAGE = "/api/concerts?size=10";

	private static final String SCHEDULES = "/api/concerts/3/schedules";

	private static final List<String> READS = List.of(CONCERT, PAGE, SCHEDULES);

	private static final String STRONG_TAG = "\"[A-Za-z0-9_-]{22}\"";

	private static final String UPDATE = """
			{"title":"Changed Title","artist":"IU","venue":"KSPO Dome","description":"Three nights",
			 "startDate":"2026-12-24","endDate":"2026-12-26"}""";

	@Autowired
	private CachedJsonBodyConverter converter;

	@Test
	void theFirstReadIsAMissThenHitsComeFromL1WithOneStableStrongETag() {
		for (String path : READS) {
			Response miss = get(path);
			assertThat(miss.header("Cache-Status")).as(path).isEqualTo("concert-cache; fwd=miss; stored");
			assertThat(miss.header("ETag")).as(path).matches(STRONG_TAG);
			for (int i = 0; i < 3; i++) {
				Response hit = get(path);
				assertThat(hit.header("Cache-Status")).as(path).isEqualTo("concert-cache; hit; detail=l1");
				assertThat(hit.header("ETag")).as(path).isEqualTo(miss.header("ETag"));
				assertThat(hit.body()).isEqualTo(miss.body());
			}
		}
	}

	@Test
	void aSecondInstanceAnswersFromRedisWithTheSameETagSoItsClientsRevalidateAnywhere() {
		List<Response> first = READS.stream().map(this::get).toList();
		try (ConfigurableApplicationContext second = secondInstance()) {
			int port = second.getEnvironment().getProperty("local.server.port", Integer.class);
			awaitCaptureConfirmed(second.getBean(TieredCacheManager.class));
			for (int i = 0; i < READS.size(); i++) {
				Response fromRedis = send(port, READS.get(i), null);
				assertThat(fromRedis.header("Cache-Status")).as(READS.get(i)).isEqualTo("concert-cache; hit; detail=l2");
				assertThat(fromRedis.header("ETag")).isEqualTo(first.get(i).header("ETag"));
				assertThat(send(port, READS.get(i), first.get(i).header("ETag")).status()).isEqualTo(304);
			}
		}
	}

	@Test
	void aMatchingIfNoneMatchIs304WithoutABodyAndWithTheCachingHeaders() {
		for (String path : READS) {
			Response ok = get(path);
			String tag = ok.header("ETag");
			for (String ifNoneMatch : List.of(tag, "W/" + tag, "\"other\", " + tag, "*")) {
				Response notModified = send(this.port, path, ifNoneMatch);
				assertThat(notModified.status()).as(path + " If-None-Match: " + ifNoneMatch).isEqualTo(304);
				assertThat(notModified.body()).isEmpty();
				assertThat(notModified.header("ETag")).isEqualTo(tag);
				assertThat(notModified.header("Cache-Control")).isEqualTo(ok.header("Cache-Control"));
				assertThat(notModified.header("Cache-Status")).isEqualTo("concert-cache; hit; detail=l1");
			}
		}
	}

	@Test
	void anotherTagIs200WithTheBody() {
		for (String path : READS) {
			Response ok = get(path);
			Response changed = send(this.port, path, "\"AAAAAAAAAAAAAAAAAAAAAA\", W/\"x\"");
			assertThat(changed.status()).isEqualTo(200);
			assertThat(changed.body()).isEqualTo(ok.body());
			assertThat(changed.header("ETag")).isEqualTo(ok.header("ETag"));
		}
	}

	@Test
	void aWriteChangesTheETagsAndTheOldTagsGetTheNewBody() {
		List<String> before = READS.stream().map((path) -> get(path).header("ETag")).toList();
		assertThat(write("PUT", CONCERT, UPDATE).status()).isEqualTo(200);
		assertThat(write("POST", SCHEDULES, "{\"startsAt\":\"2026-12-25T19:00:00Z\",\"totalSeats\":1200}").status())
			.isEqualTo(201);
		for (int i = 0; i < READS.size(); i++) {
			Response after = send(this.port, READS.get(i), before.get(i));
			assertThat(after.status()).as(READS.get(i)).isEqualTo(200);
			assertThat(after.header("ETag")).matches(STRONG_TAG).isNotEqualTo(before.get(i));
			assertThat(after.header("Cache-Status")).isEqualTo("concert-cache; fwd=miss; stored");
		}
		assertThat(get(CONCERT).body()).contains("Changed Title");
		assertThat(get(SCHEDULES).body()).contains("2026-12-25T19:00:00Z");
	}

	@Test
	void cacheControlLetsClientsReuseConcertsAndPagesForASecondAndRevalidateSchedulesEveryTime() {
		assertThat(get(CONCERT).header("Cache-Control")).isEqualTo("max-age=1");
		assertThat(get(PAGE).header("Cache-Control")).isEqualTo("max-age=1");
		assertThat(get(SCHEDULES).header("Cache-Control")).isEqualTo("no-cache");
	}

	@Test
	void hitsAndRevalidationsSerializeAndHashNothing() {
		List<String> tags = READS.stream().map((path) -> get(path).header("ETag")).toList();
		long serializations = this.converter.serializations();
		for (int round = 0; round < 5; round++) {
			READS.forEach(this::get);
			for (int i = 0; i < READS.size(); i++) {
				assertThat(send(this.port, READS.get(i), tags.get(i)).status()).isEqualTo(304);
			}
		}
		assertThat(this.converter.serializations()).isEqualTo(serializations);
	}

	@Test
	void readsWrittenStraightToTheResponseAnswerAsSpringMvcsOwnHandlingDoes() {
		for (String path : READS) {
			get(path);
			// No Accept: written by CachedReadReturnValueHandler. A quality parameter: Spring MVC's content negotiation.
			Response direct = get(path);
			Response negotiated = send(request(path).header("Accept", "application/json;q=0.9").GET().build());
			assertThat(negotiated.status()).as(path).isEqualTo(200);
			assertThat(direct.status()).as(path).isEqualTo(200);
			assertThat(direct.body()).as(path).isEqualTo(negotiated.body());
			for (String header : List.of("Content-Type", "Content-Length", "ETag", "Cache-Control", "Cache-Status")) {
				assertThat(direct.header(header)).as(path + " " + header).isNotNull().isEqualTo(negotiated.header(header));
			}
			assertThat(send(request(path).header("Accept", "application/xml").GET().build()).status()).as(path)
				.isEqualTo(406);
		}
	}

	@Test
	void notFoundHasNoEntityTag() {
		Response missing = get("/api/concerts/999");
		assertThat(missing.status()).isEqualTo(404);
		assertThat(missing.header("ETag")).isNull();
	}

	private Response send(int port, String path, String ifNoneMatch) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET();
		if (ifNoneMatch != null) {
			request.header("If-None-Match", ifNoneMatch);
		}
		return send(request.build());
	}

	private ConfigurableApplicationContext secondInstance() {
		MariaDbServer db = MariaDbServer.shared();
		// Arguments, not builder properties: those are defaults, below application.yml.
		return new SpringApplicationBuilder(ApiApplication.class).profiles("cache")
			.run("--server.port=0", "--management.server.port=0", "--spring.datasource.url=" + db.jdbcUrl(),
					"--spring.datasource.username=" + MariaDbServer.USER,
					"--spring.datasource.password=" + MariaDbServer.PASSWORD, "--spring.data.redis.host=127.0.0.1",
					"--spring.data.redis.port=" + RedisServer.shared().port(), "--concert-cache.admin-token=" + TOKEN, "--concert-cache.cursor-secret=" + CURSOR_SECRET,
					"--concert-cache.warmup.max-duration=0s",
					// No hot-set fill: what the first instance published would answer from L1, not Redis.
					"--tiered-cache.hot-set.size=0");
	}

}
