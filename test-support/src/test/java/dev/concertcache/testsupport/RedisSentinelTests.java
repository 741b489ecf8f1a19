package dev.concertcache.testsupport;

import org.junit.jupiter.api.Test;

import dev.concertcache.testsupport.RedisSentinel.Node;

import static org.assertj.core.api.Assertions.assertThat;

class RedisSentinelTests {

	@Test
	void aKilledPrimaryIsReplacedByItsReplicaWithTheReplicatedKeysAndTheSentinelNamesIt() {
		try (RedisSentinel sentinel = new RedisSentinel().start()) {
			Node primary = sentinel.primary();
			Node replica = sentinel.replica();
			assertThat(primary.isPrimary()).isTrue();
			assertThat(replica.isPrimary()).isFalse();
			assertThat(primary.command("SET", "concert:1", "Aida")).contains("OK");
			assertThat(primary.command("WAIT", "1", "5000").trim()).isEqualTo("1");

			Node promoted = sentinel.killPrimary();

			assertThat(promoted).isSameAs(replica);
			assertThat(sentinel.primary()).isSameAs(replica);
			assertThat(promoted.isPrimary()).isTrue();
			assertThat(promoted.command("GET", "concert:1")).contains("Aida");
		}
	}

}
