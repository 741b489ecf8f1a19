package dev.concertcache.api.capture;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whether a position the capture has landed includes one the server reported (ADR 0039): the reader's
 * confirmations go by it.
 */
class BinlogPositionTests {

	private static final String SERVER = "db:3306";

	private static final String UUID = "3E11FA47-71CA-11E1-9E33-C80AA9429562";

	@Test
	void aMariaDbPositionIncludesEveryLowerOrEqualSequenceNumberOfEachDomain() {
		assertThat(gtid("0-1-58").includes(gtid("0-1-58"))).isTrue();
		assertThat(gtid("0-1-58").includes(gtid("0-1-57"))).isTrue();
		assertThat(gtid("0-1-57").includes(gtid("0-1-58"))).isFalse();
		assertThat(gtid("0-1-60,1-2-3").includes(gtid("0-1-58"))).isTrue();
		assertThat(gtid("0-1-60").includes(gtid("0-1-58,1-2-3"))).as("a domain not reached yet").isFalse();
	}

	@Test
	void aMariaDbSequenceNumberCountsWhicheverServerWroteIt() {
		// After the database's own failover the domain goes on under the new primary's server id.
		assertThat(gtid("0-2-60").includes(gtid("0-1-58"))).isTrue();
		assertThat(gtid("0-1-58").includes(gtid("0-2-60"))).isFalse();
	}

	@Test
	void aMySqlPositionIncludesTheSetsItContains() {
		assertThat(gtid(UUID + ":1-7").includes(gtid(UUID + ":1-5"))).isTrue();
		assertThat(gtid(UUID + ":1-7").includes(gtid(UUID + ":1-9"))).isFalse();
	}

	@Test
	void aMySqlServerUuidOfDigitsIsNotReadAsMariaDbDomains() {
		// "12345678-1234-1234" alone would read as a MariaDB GTID (domain-server-sequence).
		String digits = "12345678-1234-1234-1234-123456789012";
		assertThat(gtid(digits + ":1-7").includes(gtid(digits + ":1-9"))).isFalse();
		assertThat(gtid(digits + ":1-9").includes(gtid(digits + ":1-7"))).isTrue();
	}

	@Test
	void aFilePositionIncludesEveryEarlierOffsetAndFile() {
		assertThat(file("bin.000002", 4).includes(file("bin.000001", 900))).isTrue();
		assertThat(file("bin.000001", 900).includes(file("bin.000001", 900))).isTrue();
		assertThat(file("bin.000001", 899).includes(file("bin.000001", 900))).isFalse();
		assertThat(file("bin.000009", 900).includes(file("bin.000010", 4))).isFalse();
	}

	@Test
	void aPositionOfAnotherServerOrKindIncludesNothing() {
		assertThat(gtid("0-1-58").includes(BinlogPosition.gtid("other:3306", "0-1-1"))).isFalse();
		assertThat(gtid("0-1-58").includes(file("bin.000001", 4))).isFalse();
	}

	private static BinlogPosition gtid(String set) {
		return BinlogPosition.gtid(SERVER, set);
	}

	private static BinlogPosition file(String name, long offset) {
		return BinlogPosition.file(SERVER, name, offset);
	}

}
