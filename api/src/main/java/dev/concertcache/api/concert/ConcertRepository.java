package dev.concertcache.api.concert;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Repository;

/**
 * Concert rows. The list is a keyset scan of the primary key, so a page costs the same at any depth.
 */
@Repository
class ConcertRepository {

	private final JdbcClient jdbc;

	ConcertRepository(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/** Up to {@code limit} concerts with an id above {@code afterId}, by id. */
	List<ConcertSummary> findPage(long afterId, int limit) {
		return this.jdbc
			.sql("SELECT id, title, artist, venue, start_date, end_date FROM concert WHERE id > ? ORDER BY id LIMIT ?")
			.params(afterId, limit)
			.query(ConcertRepository::summary)
			.list();
	}

	/** The concerts with an id from {@code firstId} to {@code lastId}, by id. */
	List<ConcertSummary> findRange(long firstId, long lastId) {
		return this.jdbc
			.sql("SELECT id, title, artist, venue, start_date, end_date FROM concert WHERE id BETWEEN ? AND ? ORDER BY id")
			.params(firstId, lastId)
			.query(ConcertRepository::summary)
			.list();
	}

	/** The highest concert id, 0 without concerts. */
	long lastId() {
		return this.jdbc.sql("SELECT COALESCE(MAX(id), 0) FROM concert").query(Long.class).single();
	}

	Optional<Concert> findById(long id) {
		return this.jdbc
			.sql("SELECT id, title, artist, venue, description, start_date, end_date, updated_at FROM concert WHERE id = ?")
			.param(id)
			.query(ConcertRepository::concert)
			.optional();
	}

	long insert(ConcertRequest request, Instant now) {
		KeyHolder keys = new GeneratedKeyHolder();
		this.jdbc.sql("""
				INSERT INTO concert (title, artist, venue, description, start_date, end_date, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)""")
			.params(request.title(), request.artist(), request.venue(), request.descriptionOrEmpty(),
					request.startDate(), request.endDate(), utc(now), utc(now))
			.update(keys, "id");
		return keys.getKeyAs(Number.class).longValue();
	}

	boolean update(long id, ConcertRequest request, Instant now) {
		return this.jdbc.sql("""
				UPDATE concert SET title = ?, artist = ?, venue = ?, description = ?, start_date = ?, end_date = ?,
				updated_at = ? WHERE id = ?""")
			.params(request.title(), request.artist(), request.venue(), request.descriptionOrEmpty(),
					request.startDate(), request.endDate(), utc(now), id)
			.update() == 1;
	}

	/** Deletes the concert; its schedules go with it (ON DELETE CASCADE). */
	boolean delete(long id) {
		return this.jdbc.sql("DELETE FROM concert WHERE id = ?").param(id).update() == 1;
	}

	private static ConcertSummary summary(ResultSet rs, int row) throws SQLException {
		return new ConcertSummary(rs.getLong("id"), rs.getString("title"), rs.getString("artist"),
				rs.getString("venue"), rs.getObject("start_date", LocalDate.class),
				rs.getObject("end_date", LocalDate.class));
	}

	private static Concert concert(ResultSet rs, int row) throws SQLException {
		return new Concert(rs.getLong("id"), rs.getString("title"), rs.getString("artist"), rs.getString("venue"),
				rs.getString("description"), rs.getObject("start_date", LocalDate.class),
				rs.getObject("end_date", LocalDate.class),
				rs.getObject("updated_at", LocalDateTime.class).toInstant(ZoneOffset.UTC));
	}

	/** DATETIME columns hold UTC; LocalDateTime crosses JDBC without time-zone conversion. */
	static LocalDateTime utc(Instant instant) {
		return LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
	}

}
