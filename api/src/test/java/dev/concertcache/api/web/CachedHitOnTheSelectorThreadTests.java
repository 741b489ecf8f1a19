package dev.concertcache.api.web;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;

import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.jetty.JettyWebServer;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

import dev.concertcache.api.CachedApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link DirectReadHandler} answers a value this instance holds in memory on the selector thread that read the
 * request, and hands the rest to Jetty's pool: with every pool thread parked (a servlet filter holds them on a
 * latch), a cached hit is still answered and a miss waits for a thread.
 */
@ActiveProfiles("cache")
@TestPropertySource(properties = { "server.jetty.threads.max=12", "server.jetty.threads.min=12" })
@Import(CachedHitOnTheSelectorThreadTests.ParkingFilter.class)
class CachedHitOnTheSelectorThreadTests extends CachedApiTestSupport {

	/** More requests to park than the pool has threads, so that some wait in its queue. */
	private static final int PARKED = 16;

	/** The client of the parked requests and the miss. */
	private static final HttpClient client = HttpClient.newHttpClient();

	/** The client of the hit, whose one connection is open before the pool fills. */
	private static final HttpClient hitClient = HttpClient.newHttpClient();

	@Autowired
	private CountDownLatch release;

	@Autowired
	private WebServerApplicationContext context;

	@AfterEach
	void releaseParkedRequests() {
		this.release.countDown();
	}

	@Test
	void aCachedHitIsAnsweredWhileEveryPoolThreadIsBusyAndAMissWaitsForOne() throws Exception {
		// On the connection the hit reuses: a new connection needs a pool thread to be set up.
		assertThat(hitClient.send(request("/api/concerts/3").GET().build(), BodyHandlers.ofString()).statusCode())
			.isEqualTo(200);
		List<CompletableFuture<HttpResponse<String>>> parked = new ArrayList<>();
		for (int i = 0; i < PARKED; i++) {
			parked.add(client.sendAsync(request("/api/concerts/4?park").GET().build(), BodyHandlers.ofString()));
		}
		QueuedThreadPool pool = (QueuedThreadPool) ((JettyWebServer) this.context.getWebServer()).getServer()
			.getThreadPool();
		await().atMost(Duration.ofSeconds(10)).until(() -> pool.getQueueSize() > 0);

		HttpResponse<String> hit = hitClient.sendAsync(request("/api/concerts/3").GET().build(), BodyHandlers.ofString())
			.get(10, TimeUnit.SECONDS);
		CompletableFuture<HttpResponse<String>> miss = client.sendAsync(request("/api/concerts/5").GET().build(),
				BodyHandlers.ofString());

		assertThat(hit.statusCode()).isEqualTo(200);
		assertThat(hit.headers().firstValue("Cache-Status")).contains("concert-cache; hit; detail=l1");
		assertThat(miss).as("the miss needs a pool thread").isNotDone();
		this.release.countDown();
		assertThat(miss.get(10, TimeUnit.SECONDS).headers().firstValue("Cache-Status"))
			.contains("concert-cache; fwd=miss; stored");
		for (CompletableFuture<HttpResponse<String>> request : parked) {
			assertThat(request.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ParkingFilter {

		@Bean
		CountDownLatch release() {
			return new CountDownLatch(1);
		}

		@Bean
		FilterRegistrationBean<Filter> parkingFilter(CountDownLatch release) {
			FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(new Filter() {
				@Override
				public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
						throws IOException, ServletException {
					if (request.getParameter("park") != null) {
						try {
							release.await(30, TimeUnit.SECONDS);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
					}
					chain.doFilter(request, response);
				}
			});
			registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
			return registration;
		}

	}

}
