package dev.concertcache.api.adopt;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.DynamicPropertyRegistry;

import dev.concertcache.api.ApiHttpTestSupport;
import dev.concertcache.testsupport.DatabaseServer;

import static dev.concertcache.api.adopt.ExistingDatabase.asRoot;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A team whose tables have other names: {@code ticketing.events} and {@code ticketing.performances}. The service's
 * schema holds one view per table (the SQL of docs/adopting.md), the service reads through them with a user that
 * may only SELECT the views, and Flyway is off.
 */
abstract class ViewMappedSchemaTests extends ApiHttpTestSupport {

	private static final String DATABASE = "adopt_views";

	/** Called by the subclass's {@code @DynamicPropertySource}: one per subclass keeps their contexts apart. */
	static void viewsOverTheTeamsTables(DynamicPropertyRegistry registry, DatabaseServer server) {
		ExistingDatabase.use(server);
		asRoot("DROP DATABASE IF EXISTS ticketing", "DROP DATABASE IF EXISTS " + DATABASE,
				"CREATE DATABASE ticketing CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
				"""
						CREATE TABLE ticketing.events (event_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
						  name VARCHAR(200) NOT NULL, performer VARCHAR(200) NOT NULL, location VARCHAR(200) NOT NULL,
						  summary TEXT NULL, first_day DATE NOT NULL, last_day DATE NOT NULL,
						  created DATETIME(3) NOT NULL, modified DATETIME(3) NOT NULL)""",
				"""
						CREATE TABLE ticketing.performances (performance_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
						  event_id BIGINT NOT NULL, begins_at DATETIME NOT NULL, capacity INT NOT NULL,
						  KEY idx_performances_event_begins (event_id, begins_at))""",
				"CREATE DATABASE " + DATABASE + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
				// Exactly the statements of docs/adopting.md.
				"""
						CREATE ALGORITHM = MERGE SQL SECURITY DEFINER VIEW %s.concert AS
						  SELECT event_id AS id, name AS title, performer AS artist, location AS venue,
						         COALESCE(summary, '') AS description, first_day AS start_date, last_day AS end_date,
						         created AS created_at, modified AS updated_at
						  FROM ticketing.events""".formatted(DATABASE),
				"""
						CREATE ALGORITHM = MERGE SQL SECURITY DEFINER VIEW %s.schedule AS
						  SELECT performance_id AS id, event_id AS concert_id, begins_at AS starts_at,
						         capacity AS total_seats
						  FROM ticketing.performances""".formatted(DATABASE));
		ExistingDatabase.createReader(DATABASE);
		registry.add("spring.datasource.url", () -> ExistingDatabase.jdbcUrl(DATABASE));
		registry.add("spring.datasource.username", () -> ExistingDatabase.READER);
		registry.add("spring.datasource.password", () -> ExistingDatabase.READER_PASSWORD);
		registry.add("spring.flyway.enabled", () -> "false");
	}

	@BeforeEach
	void theTeamsRows() {
		asRoot("DELETE FROM ticketing.performances", "DELETE FROM ticketing.events",
				"INSERT INTO ticketing.events VALUES (3, 'Golden Hour', 'IU', 'KSPO Dome', NULL, "
						+ "'2026-12-24', '2026-12-26', NOW(3), '2026-11-01 10:00:00')",
				"INSERT INTO ticketing.events VALUES (5, 'Born Pink', 'BLACKPINK', 'Gocheok Sky Dome', 'Encore', "
						+ "'2027-01-10', '2027-01-11', NOW(3), NOW(3))",
				"INSERT INTO ticketing.performances VALUES (31, 3, '2026-12-25 10:00:00', 12000), "
						+ "(30, 3, '2026-12-24 10:00:00', 15000)");
	}

	@Test
	void theListAConcertAndItsSchedulesAreReadThroughTheViews() {
		Response page = get("/api/concerts");
		assertThat(page.status()).isEqualTo(200);
		assertThat(page.json().get("items").valueStream().map((item) -> item.get("title").asString()))
			.containsExactly("Golden Hour", "Born Pink");
		Response concert = get("/api/concerts/3");
		assertThat(concert.json().get("artist").asString()).isEqualTo("IU");
		assertThat(concert.json().get("description").asString()).isEmpty();
		Response schedules = get("/api/concerts/3/schedules");
		assertThat(schedules.json().get("schedules").valueStream().map((s) -> s.get("totalSeats").asInt()))
			.containsExactly(15000, 12000);
	}

	@Test
	void aSeatCountChangedInTheTeamsTableIsReadBackThroughTheView() {
		asRoot("UPDATE ticketing.performances SET capacity = 14321 WHERE performance_id = 30");
		assertThat(get("/api/concerts/3/schedules").json().at("/schedules/0/totalSeats").asInt()).isEqualTo(14321);
	}

	@Test
	void theReadOnlyUserCannotReadTheTeamsTablesDirectly() {
		assertThat(get("/api/concerts/5").status()).isEqualTo(200);
		assertThat(this.jdbc.sql("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'ticketing'")
			.query(Long.class)
			.single()).isZero();
	}

	@Test
	void aListPageThroughTheViewIsStillARangeScanOfTheBaseTablesPrimaryKey() {
		// As root: EXPLAIN of a view needs privileges on its base tables, which the reader has not.
		List<Map<String, Object>> plan = ExistingDatabase.root()
			.sql("EXPLAIN SELECT id, title, artist, venue, start_date, end_date FROM " + DATABASE + ".concert "
					+ "WHERE id > 1 ORDER BY id LIMIT 21")
			.query()
			.listOfRows();
		assertThat(plan).hasSize(1);
		assertThat(plan.get(0)).containsEntry("table", "events").containsEntry("key", "PRIMARY");
		assertThat(String.valueOf(plan.get(0).get("Extra"))).doesNotContain("filesort");
	}

}
