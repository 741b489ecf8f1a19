package dev.concertcache.api.capture;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

import dev.concertcache.api.CachedApiTestSupport;
import dev.concertcache.testsupport.CommandTrap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Causal reads (ADR 0038) against the shared MariaDB and its binary-log reader: a write answers with its commit
 * position, and a read that carries one is served from the tiers only once this instance heard the reader confirm
 * that position, else from the database. The reader's landing is parked on a latch to hold the confirmation back.
 */
@ActiveProfiles("cache")
// Shorter than max-lag: a read past its wait finds the tiers still trusted, so only the read-through keeps L1's value
// from it.
@TestPropertySource(properties = "concert-cache.capture.progress.causal-read-wait=100ms")
@Import(ParkedLanding.Trapped.class)
class CausalReadTests extends CachedApiTestSupport {

	private static final String POSITION = "Concert-Cache-Position";

	@Autowired
	private CommandTrap commands;

	@Autowired
	private CommitPositions positions;

	@Autowired
	private MeterRegistry meters;

	@Test
	void aWriteAnswersWithItsCommitPositionInAHeaderAndACookie() {
		Response written = write("PUT", "/api/concerts/4", concert("Written Here"));

		assertThat(written.status()).isEqualTo(200);
		String position = written.header(POSITION);
		assertThat(position).isNotBlank();
		assertThat(written.header("Set-Cookie")).startsWith(POSITION + "=" + position + ";")
			.contains("Path=/api/", "HttpOnly", "SameSite=Lax");
	}

	@Test
	void aReadCarryingAPositionTheReaderConfirmedIsServedFromTheTiers() {
		get("/api/concerts/4");
		String position = write("PUT", "/api/concerts/4", concert("Confirmed")).header(POSITION);
		double caughtUp = causalReads("caught-up");

		Response read = send(request("/api/concerts/4").header(POSITION, position).GET().build());

		assertThat(read.json().get("title").asString()).isEqualTo("Confirmed");
		assertThat(causalReads("caught-up")).isEqualTo(caughtUp + 1);
	}

	@Test
	void aReadCarryingAPositionTheReaderHasNotConfirmedInTimeIsServedByTheDatabasePastWhatL1Holds() throws Exception {
		assertThat(get("/api/concerts/6").json().get("title").asString()).isNotEqualTo("Behind The Reader");
		// The reader reads the change but cannot land it, so it confirms nothing past it.
		try (ParkedLanding parked = ParkedLanding.of(this.commands)) {
			// Another application's write; its client learned the position as a write through the API would.
			this.jdbc.sql("UPDATE concert SET title = 'Behind The Reader' WHERE id = 6").update();
			String position = this.positions.now();
			double database = causalReads("database");

			Response withPosition = send(request("/api/concerts/6").header(POSITION, position).GET().build());

			assertThat(withPosition.json().get("title").asString()).isEqualTo("Behind The Reader");
			assertThat(causalReads("database")).isEqualTo(database + 1);
		}
	}

	@Test
	void aPositionInTheCookieCountsAsInTheHeader() {
		String position = write("PUT", "/api/concerts/8", concert("By Cookie")).header(POSITION);
		double caughtUp = causalReads("caught-up");

		Response read = send(request("/api/concerts/8").header("Cookie", POSITION + "=" + position).GET().build());

		assertThat(read.json().get("title").asString()).isEqualTo("By Cookie");
		assertThat(causalReads("caught-up")).isEqualTo(caughtUp + 1);
	}

	@Test
	void aPositionThisServiceDidNotIssueIsABadRequestThatNamesTheHeader() {
		Response read = send(request("/api/concerts/4").header(POSITION, "bm90LWEtcG9zaXRpb24").GET().build());

		assertThat(read.status()).isEqualTo(400);
		assertThat(read.contentType()).startsWith("application/problem+json");
		assertThat(read.json().get("detail").asString()).contains(POSITION);
	}

	@Test
	void aFailedWriteAnswersWithoutAPosition() {
		Response written = write("PUT", "/api/concerts/99999", concert("Nowhere"));

		assertThat(written.status()).isEqualTo(404);
		assertThat(written.header(POSITION)).isNull();
	}

	private double causalReads(String served) {
		return this.meters.counter("concert.cache.causal.reads", "served", served).count();
	}

	private static String concert(String title) {
		return """
				{"title":"%s","artist":"a","venue":"v","description":"d","startDate":"2027-01-01","endDate":"2027-01-02"}
				""".formatted(title);
	}

}
