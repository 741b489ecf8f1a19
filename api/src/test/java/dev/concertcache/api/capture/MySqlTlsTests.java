package dev.concertcache.api.capture;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;

import dev.concertcache.api.ApiApplication;
import dev.concertcache.testsupport.DatabaseServer;
import dev.concertcache.testsupport.MySqlServer;
import dev.concertcache.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A MySQL 9.7 user of {@code caching_sha2_password} that the server lets in over TLS only ({@code REQUIRE SSL}),
 * logging in for the first time since it was made (nothing cached for it, so its password is checked in full), set
 * up as docs/adopting.md says: the application's JDBC with {@code sslMode=verify-ca} and the server's CA
 * ({@code serverSslCert}), the capture with {@code concert-cache.capture.ssl-mode=verify-ca} and that CA in the
 * JVM's trust store. The CA is the one {@code mysqld --initialize} made.
 */
class MySqlTlsTests {

	private static final String PASSWORD = "tls-only-secret";

	private static final String TOKEN = "test-admin-token";

	private static final HttpClient HTTP = HttpClient.newHttpClient();

	private static MySqlServer mysql;

	private static RedisServer redis;

	private static String trustStore;

	private static String trustStorePassword;

	@BeforeAll
	static void servers(@TempDir Path dir) throws Exception {
		mysql = MySqlServer.shared();
		redis = new RedisServer();
		redis.start();
		Path store = dir.resolve("mysql-ca.p12");
		KeyStore keys = KeyStore.getInstance("PKCS12");
		keys.load(null, null);
		try (var pem = Files.newInputStream(mysql.certificateAuthority())) {
			keys.setCertificateEntry("mysql-ca", CertificateFactory.getInstance("X.509").generateCertificate(pem));
		}
		try (var out = Files.newOutputStream(store)) {
			keys.store(out, "changeit".toCharArray());
		}
		trustStore = System.getProperty("javax.net.ssl.trustStore");
		trustStorePassword = System.getProperty("javax.net.ssl.trustStorePassword");
		// The capture's verify modes check the server's certificate against the JVM's trust store.
		System.setProperty("javax.net.ssl.trustStore", store.toString());
		System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
	}

	@AfterAll
	static void removeServers() {
		restore("javax.net.ssl.trustStore", trustStore);
		restore("javax.net.ssl.trustStorePassword", trustStorePassword);
		redis.close();
	}

	@Test
	void aUserAllowedInOverTlsOnlyReadsTheBinaryLogOverTlsAndServesAnotherConnectionsChange() throws Exception {
		String user = tlsOnlyUser();
		try (ConfigurableApplicationContext app = start(user, "verify-ca")) {
			int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
			long id = 900_000 + (System.nanoTime() % 1000);
			asConcert("INSERT INTO concert (id, title, artist, venue, description, start_date, end_date, created_at, "
					+ "updated_at) VALUES (" + id + ", 'Before', 'a', 'v', 'd', '2026-12-01', '2026-12-02', NOW(), NOW())");
			try {
				assertThat(get(port, "/api/concerts/" + id)).contains("\"title\":\"Before\"");
				asConcert("UPDATE concert SET title = 'Changed Over TLS' WHERE id = " + id);
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(get(port, "/api/concerts/" + id)).contains("Changed Over TLS"));
				assertThat(tlsOfConnections(user)).as("the binary log's connection and the pool's, each with its cipher")
					.anySatisfy((connection) -> assertThat(connection).startsWith("Binlog Dump"))
					.anySatisfy((connection) -> assertThat(connection).startsWith("Sleep"))
					.allSatisfy((connection) -> assertThat(connection).matches(".+: [A-Z0-9_-]+"));
			}
			finally {
				asConcert("DELETE FROM concert WHERE id = " + id);
			}
		}
	}

	@Test
	void aCaptureWithoutTlsIsRefusedByTheServerAndSaysSo() throws Exception {
		String user = tlsOnlyUser();
		assertThatThrownBy(() -> start(user, "disable").close())
			.satisfies((ex) -> assertThat(NestedExceptionUtils.getMostSpecificCause(ex).getMessage())
				.contains("Access denied for user '" + user + "'"));
	}

	/**
	 * A new user each time: the server caches a {@code caching_sha2_password} user's hash after its first login,
	 * and a later login needs neither TLS nor the server's key.
	 */
	private static String tlsOnlyUser() {
		String user = "tls_" + UUID.randomUUID().toString().substring(0, 8);
		mysql.sqlAsRoot("CREATE USER '" + user + "'@'127.0.0.1' IDENTIFIED WITH caching_sha2_password BY '" + PASSWORD
				+ "' REQUIRE SSL; GRANT ALL ON " + DatabaseServer.DATABASE + ".* TO '" + user + "'@'127.0.0.1'; "
				+ "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '" + user + "'@'127.0.0.1';");
		return user;
	}

	private static ConfigurableApplicationContext start(String user, String captureSslMode) {
		String url = "jdbc:mariadb://127.0.0.1:" + mysql.port() + "/" + DatabaseServer.DATABASE
				+ "?sslMode=verify-ca&serverSslCert=" + mysql.certificateAuthority();
		// Arguments, not builder properties: those are defaults, below application.yml.
		return new SpringApplicationBuilder(ApiApplication.class).profiles("cache")
			.run("--server.port=0", "--management.server.port=0", "--spring.datasource.url=" + url,
					"--spring.datasource.username=" + user, "--spring.datasource.password=" + PASSWORD,
					"--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + redis.port(),
					"--concert-cache.capture.ssl-mode=" + captureSslMode, "--concert-cache.admin-token=" + TOKEN,
					"--concert-cache.cursor-secret=test-cursor-secret", "--concert-cache.warmup.max-duration=0s");
	}

	/** Each connection of {@code user} as "command: cipher" (empty cipher: no TLS), from the server's side. */
	private static List<String> tlsOfConnections(String user) throws SQLException {
		List<String> connections = new ArrayList<>();
		try (Connection connection = DriverManager.getConnection(mysql.jdbcUrl(), "root", "");
				Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT t.PROCESSLIST_COMMAND, s.ssl_cipher "
						+ "FROM performance_schema.threads t JOIN sys.session_ssl_status s USING (thread_id) "
						+ "WHERE t.PROCESSLIST_USER = '" + user + "'")) {
			while (rs.next()) {
				connections.add(rs.getString(1) + ": " + rs.getString(2));
			}
		}
		return connections;
	}

	private static void asConcert(String statement) throws SQLException {
		try (Connection connection = DriverManager.getConnection(mysql.jdbcUrl(), DatabaseServer.USER,
				DatabaseServer.PASSWORD); Statement jdbc = connection.createStatement()) {
			jdbc.execute(statement);
		}
	}

	private static String get(int port, String path) throws Exception {
		return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString()).body();
	}

	private static void restore(String property, String value) {
		if (value == null) {
			System.clearProperty(property);
		}
		else {
			System.setProperty(property, value);
		}
	}

}
