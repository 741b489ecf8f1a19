package dev.concertcache.api.web;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.test.context.ActiveProfiles;

import dev.concertcache.api.CachedApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link DirectReadHandler} over real HTTP: which requests it answers before the servlet filters (a filter here
 * counts what reaches them), that its answer is Spring MVC's answer for the same request (status, caching headers,
 * content type, body), and that both count in the same {@code http.server.requests} series.
 */
@ActiveProfiles("cache")
@Import(DirectReadHandlerTests.CountingFilter.class)
class DirectReadHandlerTests extends CachedApiTestSupport {

	/** An Accept Spring MVC answers with JSON but the handler leaves to it. */
	private static final String ACCEPT_VIA_MVC = "application/json, */*;q=0.5";

	private static final List<String> READS = List.of("/api/concerts?size=10", "/api/concerts/3",
			"/api/concerts/3/schedules", "/api/concerts");

	@Autowired
	private AtomicInteger filtered;

	@Autowired
	private MeterRegistry registry;

	@Test
	void aPlainCachedReadIsAnsweredBeforeTheServletWithSpringMvcsHeadersAndBody() {
		for (String path : READS) {
			Response viaMvc = send(request(path).header("Accept", ACCEPT_VIA_MVC).GET().build());
			int before = this.filtered.get();
			Response direct = get(path);
			assertThat(this.filtered.get()).as(path + " reached the servlet filters").isEqualTo(before);
			assertThat(direct.status()).isEqualTo(200);
			assertThat(direct.body()).as(path).isEqualTo(viaMvc.body());
			assertThat(direct.contentType()).isEqualTo(viaMvc.contentType()).isEqualTo("application/json");
			for (String header : List.of("ETag", "Cache-Control", "Content-Length")) {
				assertThat(direct.header(header)).as(path + " " + header).isNotNull().isEqualTo(viaMvc.header(header));
			}
			assertThat(direct.header("Cache-Status")).isEqualTo("concert-cache; hit; detail=l1");
			assertThat(direct.header("Date")).isNotNull();
		}
	}

	@Test
	void bothPathsCountInOneSeriesOfTheRequestsTimer() {
		long start = timer().count();
		get("/api/concerts/5");
		send(request("/api/concerts/5").header("Accept", ACCEPT_VIA_MVC).GET().build());
		// Spring MVC's observation stops after the response has gone out: counted from once it has.
		await().atMost(Duration.ofSeconds(5)).until(() -> timer().count() >= start + 2);
		long before = timer().count();
		get("/api/concerts/5");
		send(request("/api/concerts/5").header("Accept", ACCEPT_VIA_MVC).GET().build());
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(timer().count()).isEqualTo(before + 2));
		assertThat(this.registry.find("http.server.requests").tags("uri", "/api/concerts/{id}", "status", "200").timers())
			.hasSize(1);
	}

	@Test
	void whatItDoesNotParseGoesToSpringMvcUnchanged() {
		get("/api/concerts/3");
		for (String path : List.of("/api/concerts/03", "/api/concerts/3?x=1", "/api/concerts?size=101",
				"/api/concerts?size=0", "/api/concerts?size=10&size=20", "/api/concerts?cursor=a%2Bb",
				"/api/concerts/3/", "/api/concerts/99999")) {
			int before = this.filtered.get();
			get(path);
			assertThat(this.filtered.get()).as(path).isEqualTo(before + 1);
		}
		for (String[] header : List.of(new String[] { "Cookie", "a=b" },
				new String[] { DirectReadHandler.COMMIT_POSITION, "x" }, new String[] { "Accept", "text/html" })) {
			int before = this.filtered.get();
			send(request("/api/concerts/3").header(header[0], header[1]).GET().build());
			assertThat(this.filtered.get()).as(header[0]).isEqualTo(before + 1);
		}
		int before = this.filtered.get();
		assertThat(send(request("/api/concerts/3").header("If-None-Match", get("/api/concerts/3").header("ETag"))
			.GET()
			.build()).status()).isEqualTo(304);
		assertThat(this.filtered.get()).isEqualTo(before + 1);
	}

	@Test
	void aFailedReadIsNotRepeatedButAnsweredAsSpringMvcAnswersIt() {
		Response badCursor = get("/api/concerts?cursor=notavalidcursor");
		assertThat(badCursor.status()).isEqualTo(400);
		assertThat(badCursor.contentType()).isEqualTo("application/problem+json");
		assertThat(badCursor.errorField()).isEqualTo("cursor");
		Response missing = get("/api/concerts/99999/schedules");
		assertThat(missing.status()).isEqualTo(404);
		assertThat(missing.contentType()).isEqualTo("application/problem+json");
	}

	private Timer timer() {
		return this.registry.get("http.server.requests")
			.tags("uri", "/api/concerts/{id}", "status", "200", "method", "GET", "outcome", "SUCCESS", "exception",
					"none", "error", "none")
			.timer();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class CountingFilter {

		@Bean
		AtomicInteger filtered() {
			return new AtomicInteger();
		}

		@Bean
		FilterRegistrationBean<Filter> countingFilter(AtomicInteger filtered) {
			FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(new Filter() {
				@Override
				public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
						throws IOException, ServletException {
					filtered.incrementAndGet();
					chain.doFilter(request, response);
				}
			});
			registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
			return registration;
		}

	}

}
