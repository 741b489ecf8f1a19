package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.dao.DataAccessResourceFailureException;

import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.TieredCacheMode;
import dev.concertcache.tiered.gate.PendingEvictions;
import dev.concertcache.tiered.log.InvalidationStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * The freshness contract against the interleavings that broke it (ADR 0039): once an eviction has
 * returned, the writing instance never serves the old value, and another instance stops serving it as soon as it
 * hears the eviction or, if it cannot hear, once its watermark is older than {@code max-silence}. Real Redis;
 * interleavings forced with latches, time with fake tickers.
 */
class TieredCacheFreshnessTests {

	private static final Item OLD = new Item(1, "old");

	private static final Item NEW = new Item(1, "new");

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void aReadWhileTheWriterIsBetweenRedisAndL1DoesNotPutTheOldValueBackIntoTheWritersL1() throws Exception {
		CacheInstance writer = instance(CacheInstance.properties());
		CacheUnderTest<Long, Item> cache = writer.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		CountDownLatch parked = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		// The announcement is the Redis step's last command: the tombstone or the generation move has landed.
		writer.commands.once(TieredCommands.announcement(writer.keyPrefix), () -> {
			parked.countDown();
			Latches.awaitRelease(release);
		});
		Future<?> eviction = this.scope.submit(() -> cache.evict(1L));
		assertThat(parked.await(10, TimeUnit.SECONDS)).isTrue();

		// The write is committed but not acknowledged: either value may be served now.
		cache.get(1L, () -> Optional.of(NEW));
		release.countDown();
		eviction.get(10, TimeUnit.SECONDS);

		assertThat(cache.get(1L, () -> Optional.of(NEW))).contains(NEW);
	}

	@Test
	void aReadWhileTheWriterIsBetweenRedisAndL1OfAnEvictAllDoesNotPutTheOldGenerationBack() throws Exception {
		CacheInstance writer = instance(CacheInstance.properties());
		CacheUnderTest<Long, Item> cache = writer.cache("pages", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		CountDownLatch parked = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		// The announcement is the Redis step's last command: the tombstone or the generation move has landed.
		writer.commands.once(TieredCommands.announcement(writer.keyPrefix), () -> {
			parked.countDown();
			Latches.awaitRelease(release);
		});
		Future<?> eviction = this.scope.submit(cache::evictAll);
		assertThat(parked.await(10, TimeUnit.SECONDS)).isTrue();

		cache.get(1L, () -> Optional.of(NEW));
		release.countDown();
		eviction.get(10, TimeUnit.SECONDS);

		assertThat(cache.get(1L, () -> Optional.of(NEW))).contains(NEW);
	}

	@Test
	void anInstanceLeftOnTheGenerationBeforeItsCounterWasLostServesTheNewValueAfterAWriteElsewhere() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance old = instance(properties);
		CacheUnderTest<Long, Item> onOld = old.cache("items", Long.class, Item.class);
		onOld.get(1L, () -> Optional.of(OLD));
		// FLUSHALL (or, before volatile-lfu, memory eviction) takes the counter; the next instance to start begins a new generation.
		old.redis.delete(properties.getKeyPrefix() + ":v1:items:generation");
		old.clock.advance(Duration.ofSeconds(1));
		CacheInstance restarted = instance(properties);
		restarted.clock.advance(Duration.ofSeconds(1));
		CacheUnderTest<Long, Item> onRestarted = restarted.cache("items", Long.class, Item.class);
		assertThat(onRestarted.get(1L, () -> Optional.of(OLD))).contains(OLD);
		assertThat(onRestarted.redisKey(1L)).isNotEqualTo(onOld.redisKey(1L));

		onOld.evict(1L);

		assertThat(onOld.get(1L, () -> Optional.of(NEW))).contains(NEW);
		await().atMost(Duration.ofSeconds(5)).until(() -> !onRestarted.isInL1(1L));
		assertThat(onRestarted.get(1L, () -> Optional.of(NEW))).contains(NEW);
		assertThat(onOld.redisKey(1L)).isEqualTo(onRestarted.redisKey(1L));
	}

	@Test
	void anEvictAllHeardWhileTheGenerationIsUnknownIsNotUndoneByTheReadOfTheCounter() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance instance = instance(properties);
		CacheUnderTest<Long, Item> cache = instance.cache("pages", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		String before = cache.redisKey(1L);
		long counter = Long.parseLong(instance.redis.opsForValue().get(properties.getKeyPrefix() + ":v1:pages:generation"));
		cache.flush();

		// The message of another instance's evict-all, applied before this instance has read the counter again.
		cache.onInvalidation(PendingEvictions.ALL, counter + 5);

		assertThat(cache.redisKey(1L)).isNotEqualTo(before).matches(".*:g" + (counter + 5) + ":[0-9a-f]{8}:\\{pages:1\\}");
	}

	@Test
	void aMissingInvalidationNumberMakesTheListenerFlushItsL1() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		a.cache("items", Long.class, Item.class).evict(9L);
		onB.get(1L, () -> Optional.of(OLD));
		assertThat(onB.isInL1(1L)).isTrue();
		String stream = properties.getKeyPrefix() + ":invalidations";
		long last = Long.parseLong(a.redis.opsForValue().get(InvalidationStream.sequenceKey(stream)));

		// Message last + 1 was trimmed before B read it; B reads last + 2, about another key.
		a.redis.opsForStream()
			.add(stream, Map.of("cache", "items", "key", "8", "gen", "0", "seq", String.valueOf(last + 2), "origin",
					"elsewhere", "sent", "0"));

		await().atMost(Duration.ofSeconds(5)).until(() -> !onB.isInL1(1L));
		assertThat(b.count("tiered.cache.evictions", "cache", "items", "tier", "l1", "cause", "flush")).isEqualTo(1);
	}

	@Test
	void aStreamDeletedAndStartedAgainWithoutADisconnectMakesTheListenerFlushItsL1() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		a.cache("items", Long.class, Item.class).evict(9L);
		onB.get(1L, () -> Optional.of(OLD));
		onB.get(2L, () -> Optional.of(new Item(2, "two")));
		String stream = properties.getKeyPrefix() + ":invalidations";

		a.redis.delete(List.of(stream, InvalidationStream.sequenceKey(stream)));
		a.cache("items", Long.class, Item.class).evict(1L);

		await().atMost(Duration.ofSeconds(5)).until(() -> !onB.isInL1(2L));
		assertThat(b.count("tiered.cache.evictions", "cache", "items", "tier", "l1", "cause", "flush")).isEqualTo(1);
	}

	@Test
	void anInstanceThatCannotHearInvalidationsStopsServingOldL1EntriesAfterMaxSilence() {
		CacheInstance.Settings properties = CacheInstance.properties(
				(settings) -> settings.maxSilence(Duration.ofMillis(750)));
		CacheInstance writer = instance(properties);
		CacheInstance deaf = instance(properties);
		CacheUnderTest<Long, Item> onDeaf = deaf.cache("items", Long.class, Item.class);
		onDeaf.get(1L, () -> Optional.of(OLD));
		// Its listener is gone (a dead thread, a connection that does not come back): it cannot hear the write.
		ManagerInternals.listener(deaf.manager).stop();
		assertThat(deaf.manager.isListening()).isFalse();

		writer.cache("items", Long.class, Item.class).evict(1L);
		deaf.watermark.advance(Duration.ofMillis(500));
		assertThat(onDeaf.get(1L, () -> Optional.of(NEW))).as("within max-silence: L1").contains(OLD);
		deaf.watermark.advance(Duration.ofMillis(300));

		assertThat(onDeaf.get(1L, () -> Optional.of(NEW))).as("past max-silence: read through").contains(NEW);
		assertThat(onDeaf.get(1L, () -> Optional.of(OLD))).as("read after the silence began: L1").contains(NEW);
	}

	@Test
	void anEntryReadBeforeTheListenerFirstConnectedIsNotVouchedForByWhatItHearsAfterwards() {
		CacheInstance.Settings properties = CacheInstance.properties(
				(settings) -> settings.maxSilence(Duration.ofMillis(750)));
		CacheInstance writer = instance(properties);
		CacheInstance starting = CacheInstance.notStarted(RedisServer.shared(), properties);
		this.scope.closeAfter(starting);
		CacheUnderTest<Long, Item> onStarting = starting.cache("items", Long.class, Item.class);
		// Read (a request, a hot-set fill) before the listener's first connect picks where in the stream it starts.
		onStarting.get(1L, () -> Optional.of(OLD));
		writer.cache("items", Long.class, Item.class).evict(1L);
		starting.watermark.advance(Duration.ofSeconds(1));

		starting.manager.start();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> Duration.ZERO.equals(ManagerInternals.invalidationSilence(starting.manager)));

		assertThat(onStarting.get(1L, () -> Optional.of(NEW))).as("the eviction came before the listener's start")
			.contains(NEW);
	}

	@Test
	void anEvictionWhileTheWritersRedisBreakerIsOpenReachesTheOtherInstancesAtOnce() {
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance writer = instance(properties);
		CacheInstance other = instance(properties);
		CacheUnderTest<Long, Item> onOther = other.cache("items", Long.class, Item.class);
		onOther.get(1L, () -> Optional.of(OLD));
		// Slow calls alone open it: a saturated machine, while Redis still answers.
		ManagerInternals.circuitBreaker(writer.manager).transitionToForcedOpenState();

		writer.cache("items", Long.class, Item.class).evict(1L);

		assertThat(ManagerInternals.pending(writer.manager).size()).as("queued in the writer's memory").isZero();
		await().atMost(Duration.ofSeconds(5)).until(() -> !onOther.isInL1(1L));
		assertThat(onOther.get(1L, () -> Optional.of(NEW))).contains(NEW);
	}

	@Test
	void theWriterDoesNotReadBackFromRedisTheValueItsUndeliveredEvictionRemoves() {
		CacheInstance.Settings properties = CacheInstance.properties(
				(settings) -> settings.retryInterval(Duration.ofHours(1)));
		CacheInstance writer = instance(properties);
		CacheInstance other = instance(properties);
		CacheUnderTest<Long, Item> onWriter = writer.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onOther = other.cache("items", Long.class, Item.class);
		onWriter.get(1L, () -> Optional.of(OLD));
		String generationKey = properties.getKeyPrefix() + ":v1:items:generation";
		String generation = writer.redis.opsForValue().get(generationKey);
		// The eviction script fails at its first command, before it writes anything: Redis keeps the old value.
		writer.redis.delete(generationKey);
		writer.redis.opsForHash().put(generationKey, "broken", "1");

		onWriter.evict(1L);

		assertThat(ManagerInternals.pending(writer.manager).size()).isOne();
		assertThat(onWriter.get(1L, () -> Optional.of(NEW))).as("the writer after its write").contains(NEW);
		writer.redis.delete(generationKey);
		writer.redis.opsForValue().set(generationKey, generation);
		ManagerInternals.retry(writer.manager).retry();
		assertThat(ManagerInternals.pending(writer.manager).isEmpty()).isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> !onOther.isInL1(1L));
		assertThat(onOther.get(1L, () -> Optional.of(NEW))).contains(NEW);
	}

	@Test
	void aReaderWaitsForAnotherReadersHangingLoadNoLongerThanTheLockTime() throws Exception {
		CacheInstance instance = instance(
				CacheInstance.properties((settings) -> settings.lockTtl(Duration.ofMillis(200))));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountDownLatch hanging = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		this.scope.submit(() -> cache.get(1L, () -> {
			started.countDown();
			Latches.awaitRelease(hanging);
			return Optional.of(OLD);
		}));
		assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
		CountingLoader loader = new CountingLoader();

		Future<Optional<Item>> waiting = this.scope.submit(() -> cache.get(1L, loader.returning(NEW)));

		assertThat(waiting.get(10, TimeUnit.SECONDS)).contains(NEW);
		assertThat(loader.calls()).isEqualTo(1);
		hanging.countDown();
	}

	@Test
	void inRedisModeAReadAfterAnEvictionDoesNotJoinALoadThatStartedBeforeIt() throws Exception {
		CacheInstance instance = instance(
				CacheInstance.properties((settings) -> settings.mode(TieredCacheMode.REDIS)));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		CountDownLatch readTheOldRow = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Future<Optional<Item>> before = this.scope.submit(() -> cache.get(1L, () -> {
			readTheOldRow.countDown();
			Latches.awaitRelease(release);
			return Optional.of(OLD);
		}));
		assertThat(readTheOldRow.await(10, TimeUnit.SECONDS)).isTrue();
		cache.evict(1L);

		Future<Optional<Item>> after = this.scope.submit(() -> cache.get(1L, () -> Optional.of(NEW)));

		assertThat(after.get(10, TimeUnit.SECONDS)).contains(NEW);
		release.countDown();
		assertThat(before.get(10, TimeUnit.SECONDS)).contains(OLD);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(NEW);
	}

	@Test
	void aLoaderBugIsThrownEvenWhenAStaleValueCouldBeServed() {
		CacheInstance instance = instance(CacheInstance.properties(
				(settings) -> settings.cacheDefaults(settings.cacheDefaults().withStaleIfError(Duration.ofMinutes(5)))));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		cache.get(1L, () -> Optional.of(OLD));
		instance.ticker.advance(Duration.ofMinutes(1));
		instance.clock.advance(Duration.ofMinutes(12));

		assertThatIllegalStateException().isThrownBy(() -> cache.get(1L, () -> {
			throw new IllegalStateException("a bug in the loader");
		}));
		assertThat(cache.lookup(1L, () -> {
			throw new DataAccessResourceFailureException("database down");
		}).stale()).isTrue();
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), properties));
	}

}
