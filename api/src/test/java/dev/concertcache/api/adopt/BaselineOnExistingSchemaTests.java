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
 * A team that lets the service's Flyway take over an existing schema: {@code spring.flyway.baseline-on-migrate}
 * records the tables as version 1 (the service's V1) instead of failing on a non-empty schema, and later
 * migrations apply on top.
 */
abstract class BaselineOnExistingSchemaTests extends ApiHttpTestSupport {

	private static final String DATABASE = "adopt_baseline";

	/** Called by the subclass's {@code @DynamicPropertySource}: one per subclass keeps their contexts apart. */
	static void existingSchemaAndBaseline(DynamicPropertyRegistry registry, DatabaseServer server) {
		ExistingDatabase.use(server);
		ExistingDatabase.createHandMadeSchema(DATABASE);
		ExistingDatabase.insertGoldenHour(DATABASE);
		asRoot("CREATE USER IF NOT EXISTS 'cache_owner'@'%' IDENTIFIED BY 'owner-secret'",
				"GRANT ALL ON " + DATABASE + ".* TO 'cache_owner'@'%'");
		registry.add("spring.datasource.url", () -> ExistingDatabase.jdbcUrl(DATABASE));
		registry.add("spring.datasource.username", () -> "cache_owner");
		registry.add("spring.datasource.password", () -> "owner-secret");
		registry.add("spring.flyway.baseline-on-migrate", () -> "true");
	}

	@BeforeEach
	void rows() {
		ExistingDatabase.insertGoldenHour(DATABASE);
	}

	@Test
	void flywayRecordsTheExistingTablesAsVersionOneAndRunsNothingOnThem() {
		List<String> history = this.jdbc
			.sql("SELECT CONCAT(version, ' ', type) FROM flyway_schema_history ORDER BY installed_rank")
			.query(String.class)
			.list();
		assertThat(history).containsExactly("1 BASELINE");
		assertThat(this.jdbc.sql("SELECT COUNT(*) FROM information_schema.table_constraints "
				+ "WHERE table_schema = ? AND constraint_type = 'FOREIGN KEY'")
			.param(DATABASE)
			.query(Long.class)
			.single()).as("V1's foreign key was not added").isZero();
	}

	@Test
	void theServiceReadsTheExistingRows() {
		assertThat(get("/api/concerts/7").json().get("title").asString()).isEqualTo("Golden Hour");
		assertThat(get("/api/concerts/7/schedules").json().at("/schedules/0/totalSeats").asInt()).isEqualTo(15000);
	}

}
