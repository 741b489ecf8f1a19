package dev.concertcache.api.concert;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.concertcache.api.ApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The list and schedule queries use their indexes, with no full scan and no sort (the statements are the
 * repositories' own, copied here so that a change to either shows up as a failing plan).
 */
class QueryPlanTests extends ApiTestSupport {

	@BeforeEach
	void data() {
		generate(2_000);
		this.jdbc.sql("ANALYZE TABLE concert, schedule").query().listOfRows();
	}

	@Test
	void aListPageIsARangeScanOfThePrimaryKeyWithoutSorting() {
		assertRangeScanOfThePrimaryKeyWithoutSorting(
				"SELECT id, title, artist, venue, start_date, end_date FROM concert WHERE id > 1000 ORDER BY id LIMIT 21");
	}

	@Test
	void aBlockOfTheCachedListIsARangeScanOfThePrimaryKeyWithoutSorting() {
		assertRangeScanOfThePrimaryKeyWithoutSorting(
				"SELECT id, title, artist, venue, start_date, end_date FROM concert WHERE id BETWEEN 1001 AND 1100 ORDER BY id");
	}

	@Test
	void theEndOfTheListIsReadFromTheIndexAlone() {
		List<Map<String, Object>> plan = explain("SELECT COALESCE(MAX(id), 0) FROM concert");
		assertThat(plan).hasSize(1);
		assertThat(String.valueOf(plan.get(0).get("Extra"))).contains("Select tables optimized away");
	}

	@Test
	void schedulesAreReadThroughTheConcertStartTimeIndexWithoutSorting() {
		List<Map<String, Object>> plan = explain(
				"SELECT id, starts_at, total_seats FROM schedule WHERE concert_id = 1500 ORDER BY starts_at, id");
		assertThat(plan).hasSize(1);
		assertThat(plan.get(0)).containsEntry("type", "ref").containsEntry("key", "idx_schedule_concert_starts");
		assertThat(String.valueOf(plan.get(0).get("Extra"))).doesNotContain("filesort");
	}

	private void assertRangeScanOfThePrimaryKeyWithoutSorting(String sql) {
		List<Map<String, Object>> plan = explain(sql);
		assertThat(plan).hasSize(1);
		assertThat(plan.get(0)).containsEntry("type", "range").containsEntry("key", "PRIMARY");
		assertThat(String.valueOf(plan.get(0).get("Extra"))).doesNotContain("filesort");
	}

	private List<Map<String, Object>> explain(String sql) {
		return this.jdbc.sql("EXPLAIN " + sql).query().listOfRows();
	}

}
