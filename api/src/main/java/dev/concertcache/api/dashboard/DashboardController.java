package dev.concertcache.api.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;

/**
 * Serves the dashboard page and its two assets from {@code classpath:dashboard/}. The page polls the
 * Prometheus endpoint of the same server; its path is written into the page, relative to the page, so a
 * changed {@code management.server.base-path} or endpoint mapping keeps working.
 */
@Controller
@Conditional(ManagementChildContextCondition.class)
class DashboardController {

	static final String DEFAULT_METRICS_PATH = "actuator/prometheus";

	private static final MediaType JAVASCRIPT = new MediaType("text", "javascript", StandardCharsets.UTF_8);

	private static final MediaType CSS = new MediaType("text", "css", StandardCharsets.UTF_8);

	/**
	 * Same-origin only: the page can neither load nor send anything to another host, and nothing else may
	 * frame it.
	 */
	private static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; "
			+ "style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
			+ "frame-ancestors 'none'";

	private final byte[] page;

	private final byte[] script;

	private final byte[] styles;

	DashboardController(ObjectProvider<PathMappedEndpoints> endpoints) {
		String metricsPath = metricsPath(endpoints.getIfAvailable());
		this.page = read("index.html").replace("content=\"" + DEFAULT_METRICS_PATH + "\"",
				"content=\"" + metricsPath + "\"")
			.getBytes(StandardCharsets.UTF_8);
		this.script = read("dashboard.js").getBytes(StandardCharsets.UTF_8);
		this.styles = read("dashboard.css").getBytes(StandardCharsets.UTF_8);
	}

	@GetMapping("/dashboard")
	ResponseEntity<byte[]> page() {
		return asset(this.page, MediaType.TEXT_HTML);
	}

	/** The page's relative links only work without the trailing slash. */
	@GetMapping("/dashboard/")
	ResponseEntity<Void> pageWithSlash() {
		return ResponseEntity.status(HttpStatus.MOVED_PERMANENTLY).header(HttpHeaders.LOCATION, "../dashboard").build();
	}

	@GetMapping("/dashboard/dashboard.js")
	ResponseEntity<byte[]> script() {
		return asset(this.script, JAVASCRIPT);
	}

	@GetMapping("/dashboard/dashboard.css")
	ResponseEntity<byte[]> styles() {
		return asset(this.styles, CSS);
	}

	private static ResponseEntity<byte[]> asset(byte[] body, MediaType type) {
		MediaType contentType = (type.getCharset() != null) ? type : new MediaType(type, StandardCharsets.UTF_8);
		return ResponseEntity.ok()
			.contentType(contentType)
			.cacheControl(CacheControl.noCache())
			.header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
			.header("X-Content-Type-Options", "nosniff")
			.header("Referrer-Policy", "no-referrer")
			.body(body);
	}

	/** The Prometheus endpoint's path relative to {@code /dashboard}, both under the management base path. */
	private static String metricsPath(PathMappedEndpoints endpoints) {
		String path = (endpoints != null) ? endpoints.getPath(EndpointId.of("prometheus")) : null;
		if (path == null || path.isBlank()) {
			return DEFAULT_METRICS_PATH;
		}
		return path.startsWith("/") ? path.substring(1) : path;
	}

	private static String read(String name) {
		try (InputStream in = new ClassPathResource("dashboard/" + name).getInputStream()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Dashboard asset " + name + " is missing from the classpath", ex);
		}
	}

}
