package dev.concertcache.floor;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * The API's data set, generated in memory at start: the same draws in the same order as the API's
 * {@code DataGenerator} for the same seed and size, so the floor's responses have the shape and the size of the
 * API's (titles, venues, 2.2 schedules per concert).
 */
@Component
class FloorData {

	private static final String[] ARTISTS = { "IU", "BTS", "Seventeen", "NewJeans", "aespa", "Lim Young-woong",
			"Coldplay", "Taylor Swift", "Day6", "Hoshi", "Jannabi", "Akdong Musician", "Zico", "Stray Kids" };

	private static final String[] VENUES = { "KSPO Dome", "Jamsil Olympic Stadium", "Gocheok Sky Dome",
			"Blue Square", "Sejong Center", "Yes24 Live Hall", "Busan Asiad", "Incheon Inspire Arena" };

	private static final String[] WORDS = { "Spring", "Night", "Live", "Tour", "Encore", "Festival", "Memories",
			"Blue", "Stage", "Winter", "Dream", "Concert", "Symphony", "Fan Meeting", "Road" };

	private static final LocalDate FIRST_DAY = LocalDate.of(2026, 1, 1);

	private static final Instant CREATED = Instant.parse("2025-12-01T00:00:00Z");

	/** Index {@code id - 1}. */
	private final List<Concert> concerts;

	private final List<ConcertSummary> summaries;

	private final List<List<Schedule>> schedules;

	FloorData(@Value("${floor.concerts:5000}") int concerts, @Value("${floor.seed:42}") long seed) {
		this.concerts = new ArrayList<>(concerts);
		this.summaries = new ArrayList<>(concerts);
		this.schedules = new ArrayList<>(concerts);
		SplittableRandom random = new SplittableRandom(seed);
		long scheduleId = 0;
		for (long id = 1; id <= concerts; id++) {
			String artist = ARTISTS[random.nextInt(ARTISTS.length)];
			String venue = VENUES[random.nextInt(VENUES.length)];
			String title = artist + " " + WORDS[random.nextInt(WORDS.length)] + " "
					+ WORDS[random.nextInt(WORDS.length)] + " #" + id;
			LocalDate start = FIRST_DAY.plusDays(random.nextInt(730));
			int performances = (random.nextInt(5) == 0) ? 3 : 2;
			LocalDate end = start.plusDays(performances - 1);
			this.concerts.add(new Concert(id, title, artist, venue,
					title + " at " + venue + ": " + performances + " nights.", start, end, CREATED));
			this.summaries.add(new ConcertSummary(id, title, artist, venue, start, end));
			int seats = 500 + random.nextInt(60) * 500;
			LocalTime time = (random.nextBoolean()) ? LocalTime.of(19, 30) : LocalTime.of(18, 0);
			List<Schedule> list = new ArrayList<>(performances);
			for (int day = 0; day < performances; day++) {
				list.add(new Schedule(++scheduleId, start.plusDays(day).atTime(time).toInstant(ZoneOffset.UTC), seats));
			}
			this.schedules.add(List.copyOf(list));
		}
	}

	int size() {
		return this.concerts.size();
	}

	/** The concert with this id, or {@code null}. */
	Concert concert(long id) {
		return (id >= 1 && id <= size()) ? this.concerts.get((int) (id - 1)) : null;
	}

	/** The summaries of the concerts after {@code afterId}, at most {@code size}, as a view. */
	List<ConcertSummary> page(long afterId, int size) {
		int from = (int) Math.min(Math.max(afterId, 0), size());
		return this.summaries.subList(from, Math.min(from + size, size()));
	}

	List<Schedule> schedules(long concertId) {
		return this.schedules.get((int) (concertId - 1));
	}

	record Concert(long id, String title, String artist, String venue, String description, LocalDate startDate,
			LocalDate endDate, Instant updatedAt) {
	}

	record ConcertSummary(long id, String title, String artist, String venue, LocalDate startDate,
			LocalDate endDate) {
	}

	record Schedule(long id, Instant startsAt, int totalSeats) {
	}

}
