package dev.concertcache.tiered;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ReadMessagesTests {

	@Test
	void aMessageWithAnIdReadBeforeButAnotherNumberIsNotACopy() {
		ReadMessages read = new ReadMessages(8);
		read.startAfter("100-0");
		read.read("200-0", "7");
		read.read("200-1", "8");

		ReadMessages.Seen seen = read.seen();

		assertThat(seen.wasRead("200-0", "7")).isTrue();
		assertThat(seen.wasRead("200-1", "8")).isTrue();
		assertThat(seen.wasRead("200-1", "7")).isFalse();
	}

	@Test
	void aMessageWhoseIdFallsAmongThoseReadButWasNeverReadIsNotACopy() {
		ReadMessages read = new ReadMessages(8);
		read.startAfter("100-0");
		read.read("200-0", "7");
		read.read("300-0", "8");

		ReadMessages.Seen seen = read.seen();

		assertThat(seen.wasRead("250-0", "8")).isFalse();
		assertThat(seen.isPast("250-0")).isFalse();
		assertThat(seen.isPast("300-1")).isTrue();
	}

	@Test
	void everyMessageAtOrBeforeTheStartCountsAsRead() {
		ReadMessages read = new ReadMessages(8);
		read.startAfter("100-5");

		ReadMessages.Seen seen = read.seen();

		assertThat(seen.wasRead("100-5", null)).isTrue();
		assertThat(seen.wasRead("99-9", "1")).isTrue();
		assertThat(seen.wasRead("100-6", "1")).isFalse();
		assertThat(seen.isPast("100-6")).isTrue();
	}

	@Test
	void pastItsCapacityTheOldestMessageReadBecomesTheStart() {
		ReadMessages read = new ReadMessages(2);
		read.startAfter("0-0");
		read.read("10-0", "1");
		read.read("20-0", "2");
		read.read("30-0", "3");

		ReadMessages.Seen seen = read.seen();

		assertThat(seen.wasRead("10-0", "9")).isTrue();
		assertThat(seen.wasRead("15-0", "9")).isFalse();
		assertThat(seen.wasRead("30-0", "3")).isTrue();
		assertThat(seen.isPast("31-0")).isTrue();
	}

}
