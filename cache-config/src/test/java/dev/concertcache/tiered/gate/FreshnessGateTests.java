package dev.concertcache.tiered.gate;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static dev.concertcache.tiered.gate.InvalidationWatermark.NEVER;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gate's rules on an injected ticker: what L1 and Redis may serve as the stream is heard, the feed confirms,
 * evictions stay pending and connections drop.
 */
class FreshnessGateTests {

	private static final Duration MAX_SILENCE = Duration.ofMillis(750);

	private static final Duration MAX_LAG = Duration.ofMillis(200);

	private static final Duration DISCONNECT_MAX_AGE = Duration.ofMillis(50);

	private final AtomicLong nanos = new AtomicLong(TimeUnit.SECONDS.toNanos(100));

	private final FreshnessGate gate = new FreshnessGate(this.nanos::get, MAX_SILENCE, DISCONNECT_MAX_AGE, MAX_LAG,
			10);

	private final FreshnessGate withoutFeed = new FreshnessGate(this.nanos::get, MAX_SILENCE,
			DISCONNECT_MAX_AGE, null, 10);

	@Test
	void anEntryIsServedWhileTheStreamWasHeardAndTheFeedConfirmedSinceItWasRead() {
		long readAt = listeningAndConfirmed(this.gate);
		advance(100);
		this.gate.heard().heardUntil(this.gate.now());
		this.gate.feedConfirmedUntil(this.gate.now());
		advance(150);
		assertThat(this.gate.servesFromL1("c", "k", readAt, readAt)).isTrue();
		assertThat(this.gate.trustsRedis()).isTrue();
	}

	@Test
	void pastMaxLagWithoutAConfirmationNeitherTierIsTrustedForWhatWasReadFromTheDatabaseBefore() {
		long readAt = listeningAndConfirmed(this.gate);
		this.gate.heard().heardUntil(this.gate.now());
		advance(MAX_LAG.toMillis() + 1);
		this.gate.heard().heardUntil(this.gate.now());
		assertThat(this.gate.servesFromL1("c", "k", readAt, readAt)).isFalse();
		assertThat(this.gate.trustsRedis()).isFalse();
		assertThat(this.gate.feedSilence()).isEqualTo(Duration.ofMillis(MAX_LAG.toMillis() + 1));
	}

	@Test
	void behindTheFeedAValueReadFromTheDatabaseWithinMaxLagIsServedFromL1() {
		listeningAndConfirmed(this.gate);
		advance(MAX_LAG.toMillis() + 1);
		this.gate.heard().heardUntil(this.gate.now());
		long loadedAt = this.gate.now();
		advance(MAX_LAG.toMillis());
		assertThat(this.gate.servesFromL1("c", "k", loadedAt, loadedAt)).isTrue();
		advance(1);
		assertThat(this.gate.servesFromL1("c", "k", loadedAt, loadedAt)).isFalse();
		assertThat(this.gate.feedMaxLag()).isEqualTo(MAX_LAG);
	}

	@Test
	void pastMaxSilenceL1ServesOnlyWhatItReadWithinIt() {
		long readAt = listeningAndConfirmed(this.withoutFeed);
		advance(MAX_SILENCE.toMillis() + 1);
		long recent = this.withoutFeed.now();
		assertThat(this.withoutFeed.servesFromL1("c", "k", readAt, readAt)).isFalse();
		assertThat(this.withoutFeed.servesFromL1("c", "k", recent, NEVER)).isTrue();
		assertThat(this.withoutFeed.trustsRedis()).isTrue();
	}

	@Test
	void whatWasReadBeforeTheListenerStartedIsNotVouchedForByWhatItHears() {
		long readBefore = this.withoutFeed.now();
		advance(MAX_SILENCE.toMillis() + 1);
		this.withoutFeed.heard().listeningFrom(this.withoutFeed.now());
		this.withoutFeed.heard().heardUntil(this.withoutFeed.now());
		assertThat(this.withoutFeed.servesFromL1("c", "k", readBefore, NEVER)).isFalse();
	}

	@Test
	void aPendingEvictionOfAKeyKeepsItFromBothTiers() {
		long readAt = listeningAndConfirmed(this.gate);
		this.gate.pending().add("c", "k");
		assertThat(this.gate.servesFromL1("c", "k", readAt, readAt)).isFalse();
		assertThat(this.gate.redisStamp("c", "k")).isNegative();
		assertThat(this.gate.servesFromL1("c", "other", readAt, readAt)).isTrue();
		assertThat(this.gate.redisStamp("c", "other")).isNotNegative();
	}

	@Test
	void aPendingEvictionOfAWholeCacheKeepsItFromRedisButNotFromL1() {
		long readAt = listeningAndConfirmed(this.gate);
		this.gate.pending().add("c", PendingEvictions.ALL);
		assertThat(this.gate.redisStamp("c", "k")).isNegative();
		assertThat(this.gate.servesFromL1("c", "k", readAt, readAt)).isTrue();
	}

	@Test
	void aDisconnectKeepsRedisUnreadUntilTheServerIsConfirmedAndVoidsAReadStartedBefore() {
		long stamp = this.gate.redisStamp("c", "k");
		long disconnects = this.gate.server().disconnected();
		assertThat(this.gate.redisHolds(stamp)).isFalse();
		assertThat(this.gate.redisStamp("c", "k")).isNegative();
		this.gate.server().confirmed(disconnects);
		assertThat(this.gate.redisHolds(this.gate.redisStamp("c", "k"))).isTrue();
	}

	@Test
	void fromADisconnectUntilAReadOfTheStreamSentAfterItL1ServesOnlyWhatItReadWithinTheDisconnectMaxAge() {
		long readBefore = listeningAndConfirmed(this.gate);
		advance(DISCONNECT_MAX_AGE.toMillis() + 1);
		long readAt = this.gate.now();
		long readStartedBefore = this.gate.disconnects();
		this.gate.disconnected();
		this.gate.heard().heardUntil(this.gate.now());
		this.gate.readAfter(readStartedBefore);
		assertThat(this.gate.servesFromL1("c", "k", readBefore, readBefore)).as("heard, but by a read sent before")
			.isFalse();
		assertThat(this.gate.servesFromL1("c", "k", readAt, readAt)).isTrue();
		advance(DISCONNECT_MAX_AGE.toMillis() + 1);
		assertThat(this.gate.servesFromL1("c", "k", readAt, readAt)).isFalse();

		this.gate.readAfter(this.gate.disconnects());
		assertThat(this.gate.servesFromL1("c", "k", readBefore, readBefore)).isTrue();
	}

	/** The listener started and heard, the feed confirmed, and a value read, all now. */
	private long listeningAndConfirmed(FreshnessGate gate) {
		long now = gate.now();
		gate.heard().listeningFrom(now);
		gate.heard().heardUntil(now);
		gate.feedConfirmedUntil(now);
		return now;
	}

	private void advance(long millis) {
		this.nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
	}

}
