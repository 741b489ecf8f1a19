package dev.concertcache.api.generate;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.SplittableRandom;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Fills an empty database with deterministic concerts and schedules (ids from 1, in order), by batched bulk
 * inserts on one connection with constraint checks deferred, printing progress.
 */
public class DataGenerator {

	private static final Log logger = LogFactory.getLog(DataGenerator.class);

	private static final int BATCH = 2_000;

	private static final int PROGRESS_EVERY = 100_000;

	private static final String[] ARTISTS = { "IU", "BTS", "Seventeen", "NewJeans", "aespa", "Lim Young-woong",
			"Coldplay", "Taylor Swift", "Day6", "Hoshi", "Jannabi", "Akdong Musician", "Zico", "Stray Kids" };

	private static final String[] VENUES = { "KSPO Dome", "Jamsil Olympic Stadium", "Gocheok Sky Dome",
			"Blue Square", "Sejong Center", "Yes24 Live Hall", "Busan Asiad", "Incheon Inspire Arena" };

	private static final String[] WORDS = { "Spring", "Night", "Live", "Tour", "Encore", "Festival", "Memories",
			"Blue", "Stage", "Winter", "Dream", "Concert", "Symphony", "Fan Meeting", "Road" };

	private static final LocalDate FIRST_DAY = LocalDate.of(2026, 1, 1);

	private final DataSource dataSource;

	public DataGenerator(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	/** Inserts {@code concerts} concerts and their schedules; returns the number of schedules. */
	public long generate(int concerts, long seed, boolean replace) throws SQLException {
		long started = System.nanoTime();
		long schedules = 0;
		try (Connection connection = this.dataSource.getConnection()) {
			connection.setAutoCommit(false);
			try (Statement statement = connection.createStatement()) {
				if (!replace && hasRows(statement)) {
					throw new IllegalStateException(
							"The database already has concerts: set concert-cache.generate.replace=true to replace them");
				}
				// The rows are generated consistent; checking each one again costs a third of the load time.
				statement.execute("SET foreign_key_checks = 0, unique_checks = 0");
				if (replace) {
					statement.execute("DELETE FROM schedule");
					statement.execute("DELETE FROM concert");
				}
			}
			try (PreparedStatement concert = connection.prepareStatement("""
					INSERT INTO concert (id, title, artist, venue, description, start_date, end_date, created_at,
					updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""");
					PreparedStatement schedule = connection.prepareStatement(
							"INSERT INTO schedule (id, concert_id, starts_at, total_seats) VALUES (?, ?, ?, ?)")) {
				SplittableRandom random = new SplittableRandom(seed);
				LocalDateTime created = LocalDateTime.of(2025, 12, 1, 0, 0);
				for (long id = 1; id <= concerts; id++) {
					String artist = ARTISTS[random.nextInt(ARTISTS.length)];
					String venue = VENUES[random.nextInt(VENUES.length)];
					String title = artist + " " + WORDS[random.nextInt(WORDS.length)] + " "
							+ WORDS[random.nextInt(WORDS.length)] + " #" + id;
					LocalDate start = FIRST_DAY.plusDays(random.nextInt(730));
					// Two performances, sometimes three: 2.2 per concert on average, as in the seeds.
					int performances = (random.nextInt(5) == 0) ? 3 : 2;
					LocalDate end = start.plusDays(performances - 1);
					concert.setLong(1, id);
					concert.setString(2, title);
					concert.setString(3, artist);
					concert.setString(4, venue);
					concert.setString(5, title + " at " + venue + ": " + performances + " nights.");
					concert.setObject(6, start);
					concert.setObject(7, end);
					concert.setObject(8, created);
					concert.setObject(9, created);
					concert.addBatch();
					int seats = 500 + random.nextInt(60) * 500;
					LocalTime time = (random.nextBoolean()) ? LocalTime.of(19, 30) : LocalTime.of(18, 0);
					for (int day = 0; day < performances; day++) {
						schedules++;
						schedule.setLong(1, schedules);
						schedule.setLong(2, id);
						schedule.setObject(3, start.plusDays(day).atTime(time));
						schedule.setInt(4, seats);
						schedule.addBatch();
					}
					if (id % BATCH == 0 || id == concerts) {
						concert.executeBatch();
						schedule.executeBatch();
						connection.commit();
					}
					if (id % PROGRESS_EVERY == 0) {
						logger.info(String.format("generated %,d of %,d concerts (%,d schedules) in %s", id, concerts,
								schedules, elapsed(started)));
					}
				}
			}
			finally {
				// The connection goes back to the pool: later statements on it must check constraints again.
				try (Statement statement = connection.createStatement()) {
					statement.execute("SET foreign_key_checks = 1, unique_checks = 1");
				}
			}
			connection.commit();
		}
		logger.info(String.format("generated %,d concerts and %,d schedules in %s", concerts, schedules,
				elapsed(started)));
		return schedules;
	}

	private static boolean hasRows(Statement statement) throws SQLException {
		try (var rs = statement.executeQuery("SELECT EXISTS (SELECT 1 FROM concert)")) {
			rs.next();
			return rs.getBoolean(1);
		}
	}

	private static String elapsed(long started) {
		Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
		return String.format("%d.%01d s", elapsed.toSeconds(), elapsed.toMillisPart() / 100);
	}

}
