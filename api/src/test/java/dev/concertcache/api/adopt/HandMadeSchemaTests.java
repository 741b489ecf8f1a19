package dev.concertcache.api.adopt;

import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.DynamicPropertyRegistry;

import dev.concertcache.api.ApiHttpTestSupport;
import dev.concertcache.testsupport.DatabaseServer;

import static dev.concertcache.api.adopt.ExistingDatabase.asRoot;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A team that owns its schema: the tables were made by hand (plain SQL, no Flyway history), the service runs with
 * {@code spring.flyway.enabled=false} and a user that may only SELECT. It starts, reads, and its admin writes are
 * refused by the database.
 */
abstract class HandMadeSchemaTests extends ApiHttpTestSupport {

	private static final String DATABASE = "adopt_hand_made";

	private static final String UPDATE = """
			{"title":"Written By The Cache","artist":"IU","venue":"KSPO Dome","description":"x",
			 "startDate":"2026-12-24","endDate":"2026-12-26"}""";

	/** Called by the subclass's {@code @DynamicPropertySource}: one per subclass keeps their contexts apart. */
	static void handMadeSchemaAndReadOnlyUser(DynamicPropertyRegistry registry, DatabaseServer server) {
		ExistingDatabase.use(server);
		ExistingDatabase.createHandMadeSchema(DATABASE);
		ExistingDatabase.createReader(DATABASE);
		registry.add("spring.datasource.url", () -> ExistingDatabase.jdbcUrl(DATABASE));
		registry.add("spring.datasource.username", () -> ExistingDatabase.READER);
		registry.add("spring.datasource.password", () -> ExistingDatabase.READER_PASSWORD);
		registry.add("spring.flyway.enabled", () -> "false");
	}

	@BeforeEach
	void theTeamsRows() {
		ExistingDatabase.insertGoldenHour(DATABASE);
	}

	@Test
	void theServiceReadsAConcertItsSchedulesAndTheListFromTablesFlywayNeverSaw() {
		Response concert = get("/api/concerts/7");
		assertThat(concert.status()).isEqualTo(200);
		assertThat(concert.json().get("title").asString()).isEqualTo("Golden Hour");
		Response schedules = get("/api/concerts/7/schedules");
		assertThat(schedules.status()).isEqualTo(200);
		assertThat(schedules.json().at("/schedules/0/totalSeats").asInt()).isEqualTo(15000);
		assertThat(get("/api/concerts").json().at("/items/0/id").asLong()).isEqualTo(7);
		assertThat(tables()).as("Flyway created nothing").containsExactlyInAnyOrder("concert", "schedule");
	}

	@Test
	void aRowChangedWithPlainSqlIsReadBack() {
		asRoot("UPDATE " + DATABASE + ".schedule SET total_seats = 14999 WHERE id = 70");
		assertThat(get("/api/concerts/7/schedules").json().at("/schedules/0/totalSeats").asInt()).isEqualTo(14999);
	}

	@Test
	void anAdminWriteIsRefusedByTheReadOnlyUserAndChangesNothing() {
		Response response = write("PUT", "/api/concerts/7", UPDATE);
		assertThat(response.status()).isEqualTo(500);
		assertThat(response.contentType()).startsWith("application/problem+json");
		assertThat(get("/api/concerts/7").json().get("title").asString()).isEqualTo("Golden Hour");
	}

	@Test
	void theServiceIsReadyWithoutFlyway() {
		assertThat(management("/actuator/health/readiness").status()).isEqualTo(200);
	}

	private List<String> tables() {
		return this.jdbc.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = ?")
			.param(DATABASE)
			.query(String.class)
			.list();
	}

}
