package dev.concertcache.api;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;

import dev.concertcache.api.generate.DataGenerator;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Base of the API tests that choose their own database: the application on a random port, driven over real HTTP.
 * Most tests extend {@link ApiTestSupport}, which adds the shared private MariaDB.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "management.endpoint.health.show-details=always",
				"concert-cache.admin-token=" + ApiHttpTestSupport.TOKEN, "concert-cache.warmup.max-duration=0s",
				"concert-cache.cursor-secret=" + ApiHttpTestSupport.CURSOR_SECRET })
public abstract class ApiHttpTestSupport {

	protected static final String TOKEN = "test-admin-token";

	/** The cursor signing key every instance of a test shares; the service has no default (ADR 0002). */
	protected static final String CURSOR_SECRET = "test-cursor-secret";

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	protected int port;

	@LocalManagementPort
	protected int managementPort;

	@Autowired
	protected JdbcClient jdbc;

	@Autowired
	protected DataSource dataSource;

	/** Replaces the data set with {@code concerts} generated concerts (ids 1..concerts). */
	protected void generate(int concerts) {
		try {
			new DataGenerator(this.dataSource).generate(concerts, 42, true);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	protected Response get(String path) {
		return send(request(path).GET().build());
	}

	protected Response write(String method, String path, String body) {
		return send(request(path).header("Authorization", "Bearer " + TOKEN)
			.header("Content-Type", "application/json")
			.method(method, (body != null) ? BodyPublishers.ofString(body) : BodyPublishers.noBody())
			.build());
	}

	/** GET {@code path} on the management port (actuator). */
	protected Response management(String path) {
		return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.managementPort + path)).GET().build());
	}

	protected HttpRequest.Builder request(String path) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path));
	}

	protected Response send(HttpRequest request) {
		try {
			HttpResponse<String> response = http.send(request, BodyHandlers.ofString());
			return new Response(response.statusCode(), response.headers().firstValue("Content-Type").orElse(""),
					response.headers().firstValue("Location").orElse(null), response.body(), response.headers());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** The global count of SELECT statements the database has executed. */
	protected long selectsExecuted() {
		return this.jdbc.sql("SHOW GLOBAL STATUS LIKE 'Com_select'")
			.query((rs, row) -> rs.getLong("Value"))
			.single();
	}

	/** An HTTP response with its body parsed lazily as JSON. */
	protected record Response(int status, String contentType, String location, String body,
			java.net.http.HttpHeaders headers) {

		/** The first value of header {@code name}, or {@code null}. */
		public String header(String name) {
			return this.headers.firstValue(name).orElse(null);
		}

		public JsonNode json() {
			return json.readTree(this.body);
		}

		/** The {@code field} of the first entry of a problem's {@code errors}. */
		public String errorField() {
			return json().path("errors").path(0).path("field").asString();
		}

	}

}
