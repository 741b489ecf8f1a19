package dev.concertcache.api.schedule;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Repository;

/**
 * Schedule rows, read through the (concert_id, starts_at) index.
 */
@Repository
class ScheduleRepository {

	private final JdbcClient jdbc;

	ScheduleRepository(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * The schedules of a concert by start time, or empty if the concert does not exist. The existence check
	 * runs only for a concert without schedules, so the usual read is one index range read without a sort.
	 */
	Optional<ConcertSchedules> findByConcert(long concertId) {
		List<Schedule> schedules = this.jdbc
			.sql("SELECT id, starts_at, total_seats FROM schedule WHERE concert_id = ? ORDER BY starts_at, id")
			.param(concertId)
			.query((rs, row) -> schedule(rs))
			.list();
		if (schedules.isEmpty() && !concertExists(concertId)) {
			return Optional.empty();
		}
		return Optional.of(new ConcertSchedules(concertId, schedules));
	}

	private boolean concertExists(long concertId) {
		return this.jdbc.sql("SELECT EXISTS (SELECT 1 FROM concert WHERE id = ?)")
			.param(concertId)
			.query(Boolean.class)
			.single();
	}

	/** Locks the concert for the rest of the transaction, so that it cannot be deleted under a schedule write. */
	boolean lockConcert(long concertId) {
		return this.jdbc.sql("SELECT id FROM concert WHERE id = ? FOR UPDATE")
			.param(concertId)
			.query(Long.class)
			.optional()
			.isPresent();
	}

	Optional<Schedule> findById(long concertId, long id) {
		return this.jdbc.sql("SELECT id, starts_at, total_seats FROM schedule WHERE id = ? AND concert_id = ?")
			.params(id, concertId)
			.query((rs, row) -> schedule(rs))
			.optional();
	}

	long insert(long concertId, ScheduleRequest request) {
		KeyHolder keys = new GeneratedKeyHolder();
		this.jdbc.sql("INSERT INTO schedule (concert_id, starts_at, total_seats) VALUES (?, ?, ?)")
			.params(concertId, utc(request.startsAt()), request.totalSeats())
			.update(keys, "id");
		return keys.getKeyAs(Number.class).longValue();
	}

	boolean update(long concertId, long id, ScheduleRequest request) {
		return this.jdbc.sql("UPDATE schedule SET starts_at = ?, total_seats = ? WHERE id = ? AND concert_id = ?")
			.params(utc(request.startsAt()), request.totalSeats(), id, concertId)
			.update() == 1;
	}

	boolean delete(long concertId, long id) {
		return this.jdbc.sql("DELETE FROM schedule WHERE id = ? AND concert_id = ?").params(id, concertId).update() == 1;
	}

	private static Schedule schedule(ResultSet rs) throws SQLException {
		return new Schedule(rs.getLong("id"), rs.getObject("starts_at", LocalDateTime.class).toInstant(ZoneOffset.UTC),
				rs.getInt("total_seats"));
	}

	/** DATETIME columns hold UTC; LocalDateTime crosses JDBC without time-zone conversion. */
	private static LocalDateTime utc(Instant instant) {
		return LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
	}

}
