package dev.concertcache.api.generate;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.concertcache.api.ApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class DataGeneratorTests extends ApiTestSupport {

	@Test
	void theSameSeedAndSizeGiveTheSameRows() throws Exception {
		DataGenerator generator = new DataGenerator(this.dataSource);
		generator.generate(500, 7, true);
		String first = checksum();
		generator.generate(500, 7, true);
		assertThat(checksum()).isEqualTo(first);
		generator.generate(500, 8, true);
		assertThat(checksum()).isNotEqualTo(first);
	}

	@Test
	void concertsGetIdsOneToNAndAboutTwoPointTwoSchedulesEach() throws Exception {
		long schedules = new DataGenerator(this.dataSource).generate(1_000, 42, true);
		assertThat(this.jdbc.sql("SELECT MIN(id), MAX(id), COUNT(*) FROM concert")
			.query((rs, row) -> new long[] { rs.getLong(1), rs.getLong(2), rs.getLong(3) })
			.single()).containsExactly(1, 1_000, 1_000);
		assertThat(count("schedule")).isEqualTo(schedules);
		assertThat(schedules / 1_000.0).isBetween(2.1, 2.3);
	}

	@Test
	void aDatabaseWithConcertsIsNotOverwrittenUnlessAsked() throws Exception {
		DataGenerator generator = new DataGenerator(this.dataSource);
		generator.generate(10, 1, true);
		assertThatIllegalStateException().isThrownBy(() -> generator.generate(10, 1, false))
			.withMessageContaining("replace");
		assertThat(count("concert")).isEqualTo(10);
	}

	@Test
	void everyPooledConnectionChecksForeignKeysAfterwards() throws Exception {
		new DataGenerator(this.dataSource).generate(10, 1, true);
		List<Connection> held = new ArrayList<>();
		try {
			// Hold the whole pool, so the generator's connection is among those checked.
			for (int i = 0; i < 10; i++) {
				held.add(this.dataSource.getConnection());
			}
			for (Connection connection : held) {
				try (var rs = connection.createStatement().executeQuery("SELECT @@foreign_key_checks")) {
					rs.next();
					assertThat(rs.getInt(1)).isEqualTo(1);
				}
			}
		}
		finally {
			for (Connection connection : held) {
				connection.close();
			}
		}
	}

	private long count(String table) {
		return this.jdbc.sql("SELECT COUNT(*) FROM " + table).query(Long.class).single();
	}

	private String checksum() {
		return this.jdbc.sql("CHECKSUM TABLE concert, schedule")
			.query((rs, row) -> rs.getString(2))
			.list()
			.toString();
	}

}
