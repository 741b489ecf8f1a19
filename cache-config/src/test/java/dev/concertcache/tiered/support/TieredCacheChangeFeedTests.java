package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.DataType;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

import dev.concertcache.testsupport.CommandTrap.Sent;
import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.InvalidationFailedException;
import dev.concertcache.tiered.NotInMemoryException;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCache.Source;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.format.JsonValueCodec;
import dev.concertcache.tiered.loader.LoadRejectedException;
import dev.concertcache.tiered.log.InvalidationStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The tiers of an instance that follows a change feed (ADR 0039): a change committed past the application is
 * invalidated only when the feed gets to it, so while the feed's last confirmation is older than
 * {@code change-feed-max-lag} neither L1 nor Redis answers. Real Redis; the feed's stall is a feed that says nothing,
 * time a fake watermark ticker.
 */
class TieredCacheChangeFeedTests {

	private static final Duration MAX_LAG = Duration.ofMillis(750);

	/** Where the envelope says when its value was read from the database. */
	private static final Pattern READ_AT = Pattern.compile("^\\{\"v\":1,\"f\":\\d+,\"r\":(\\d+),");

	private static final Item OLD = new Item(1, "old");

	private static final Item NEW = new Item(1, "new");

	@RegisterExtension
	final TestScope scope = new TestScope();

	@Test
	void anInstanceThatHasNeverHeardTheFeedReadsFromTheLoaderPastAValueRedisHoldsFromBeforeMaxLag() {
		CacheInstance.Settings properties = CacheInstance.properties();
		instance(properties).cache("items", Long.class, Item.class).get(1L, () -> Optional.of(OLD));
		CacheInstance follower = instance(following(properties));
		CacheUnderTest<Long, Item> cache = follower.cache("items", Long.class, Item.class);
		elapse(follower, MAX_LAG.plusMillis(1));
		CountingLoader database = new CountingLoader();

		assertThat(cache.get(1L, database.returning(NEW))).contains(NEW);
		assertThat(cache.get(1L, database.returning(NEW))).as("loaded within max-lag: L1").contains(NEW);
		assertThat(database.calls()).isEqualTo(1);
		assertThat(follower.count("tiered.cache.feed.behind.reads", "cache", "items")).isEqualTo(1);
	}

	@Test
	void aChangeTheStalledFeedHasNotInvalidatedIsServedByTheLoaderOnceItsLastConfirmationIsOlderThanMaxLag() {
		CacheInstance.Settings properties = following(CacheInstance.properties());
		CacheInstance loadedIt = instance(properties);
		CacheInstance readItFromRedis = instance(properties);
		confirm(loadedIt, Duration.ZERO);
		awaitConfirmed(readItFromRedis);
		CacheUnderTest<Long, Item> onLoader = loadedIt.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onReader = readItFromRedis.cache("items", Long.class, Item.class);
		assertThat(onLoader.get(1L, () -> Optional.of(OLD))).contains(OLD);
		assertThat(onReader.get(1L, () -> Optional.of(NEW))).as("from Redis").contains(OLD);

		// Committed past the application; the feed that would invalidate it has stalled and says nothing.
		elapse(loadedIt, Duration.ofMillis(500));
		elapse(readItFromRedis, Duration.ofMillis(500));
		assertThat(onLoader.get(1L, () -> Optional.of(NEW))).as("within max-lag: L1").contains(OLD);
		elapse(loadedIt, Duration.ofMillis(300));
		elapse(readItFromRedis, Duration.ofMillis(300));

		assertThat(onLoader.get(1L, () -> Optional.of(NEW))).as("past max-lag: past L1").contains(NEW);
		assertThat(onReader.get(1L, () -> Optional.of(NEW))).as("past max-lag: past L1 and Redis").contains(NEW);
		assertThat(readItFromRedis.count("tiered.cache.feed.behind.reads", "cache", "items")).isEqualTo(1);
	}

	@Test
	void aValueTheStalledFeedRefusesIsNotAnsweredFromMemoryOnAThreadThatMustNotWait() {
		CacheInstance instance = instance(following(CacheInstance.properties()));
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		try (TieredCacheManager.InMemoryOnly scope = instance.manager.inMemoryOnly()) {
			assertThat(cache.lookup(1L, () -> Optional.of(NEW)).value()).as("within max-lag").contains(OLD);
		}

		elapse(instance, MAX_LAG.plusMillis(1));

		try (TieredCacheManager.InMemoryOnly scope = instance.manager.inMemoryOnly()) {
			assertThatExceptionOfType(NotInMemoryException.class).as("past max-lag")
				.isThrownBy(() -> cache.lookup(1L, () -> Optional.of(NEW)));
		}
	}

	@Test
	void whileTheFeedIsBehindAValueAnotherInstanceReadFromTheDatabaseWithinMaxLagIsServedFromRedisWithoutALoad() {
		CacheInstance.Settings properties = following(CacheInstance.properties());
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CountingLoader database = new CountingLoader();

		assertThat(a.cache("items", Long.class, Item.class).get(1L, database.returning(NEW))).contains(NEW);
		assertThat(b.cache("items", Long.class, Item.class).lookup(1L, database.returning(NEW)))
			.isEqualTo(Lookup.fresh(Optional.of(NEW), Source.L2));

		assertThat(database.calls()).as("one load for the fleet").isEqualTo(1);
		assertThat(a.count("tiered.cache.feed.behind.reads", "cache", "items")
				+ b.count("tiered.cache.feed.behind.reads", "cache", "items")).isEqualTo(2);
	}

	@Test
	void whileTheFeedIsBehindAValueReadFromTheDatabaseMoreThanMaxLagAgoIsLoadedAgainOnceForTheFleet() {
		CacheInstance.Settings properties = following(CacheInstance.properties());
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		CountingLoader database = new CountingLoader();
		assertThat(onA.get(1L, database.returning(OLD))).contains(OLD);
		assertThat(onB.get(1L, database.returning(OLD))).contains(OLD);
		// Committed past the application; the feed that would invalidate it is behind.
		elapse(a, MAX_LAG.plusMillis(1));
		elapse(b, MAX_LAG.plusMillis(1));

		assertThat(onB.lookup(1L, database.returning(NEW))).as("neither L1 nor Redis: read too long ago")
			.isEqualTo(Lookup.fresh(Optional.of(NEW), Source.LOADER));
		assertThat(onA.lookup(1L, database.returning(NEW))).as("Redis: read from the database just now")
			.isEqualTo(Lookup.fresh(Optional.of(NEW), Source.L2));
		assertThat(database.calls()).isEqualTo(2);

		elapse(a, MAX_LAG.plusMillis(1));
		assertThat(onA.lookup(1L, database.returning(NEW))).as("what it read from Redis ages like what it loaded")
			.isEqualTo(Lookup.fresh(Optional.of(NEW), Source.LOADER));
		assertThat(database.calls()).isEqualTo(3);
	}

	@Test
	void whileTheFeedIsBehindInstancesThatMissAKeyAtOnceShareOneLoad() throws Exception {
		CacheInstance.Settings properties = following(CacheInstance.properties());
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CountDownLatch loading = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CountingLoader database = new CountingLoader();
		Supplier<Optional<Item>> returningNew = database.returning(NEW);
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try {
			Future<Optional<Item>> onA = threads.submit(() -> a.cache("items", Long.class, Item.class).get(1L, () -> {
				loading.countDown();
				Latches.awaitRelease(release);
				return returningNew.get();
			}));
			assertThat(loading.await(5, TimeUnit.SECONDS)).isTrue();
			CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
			CountDownLatch waiting = new CountDownLatch(1);
			// B's second get-or-lock step is sent only after it found the lock taken and waited for its holder.
			b.commands.nth(2, Sent.script().and(Sent.naming(onB.redisKey(1L))), waiting::countDown);
			Future<Lookup<Item>> readByB = threads.submit(() -> onB.lookup(1L, returningNew));
			// A holds the key's load lock: B waits for its value rather than loading it too.
			assertThat(waiting.await(5, TimeUnit.SECONDS)).as("B waits on A's load").isTrue();
			release.countDown();

			assertThat(onA.get(5, TimeUnit.SECONDS)).contains(NEW);
			assertThat(readByB.get(5, TimeUnit.SECONDS)).isEqualTo(Lookup.fresh(Optional.of(NEW), Source.L2));
			assertThat(database.calls()).isEqualTo(1);
		}
		finally {
			release.countDown();
			threads.shutdownNow();
		}
	}

	@Test
	void aConfirmationsLagCountsAgainstMaxLag() {
		CacheInstance.Settings properties = CacheInstance.properties();
		instance(properties).cache("items", Long.class, Item.class).get(1L, () -> Optional.of(OLD));
		CacheInstance follower = instance(following(properties));
		CacheUnderTest<Long, Item> cache = follower.cache("items", Long.class, Item.class);
		confirm(follower, Duration.ofMillis(600));
		assertThat(cache.get(1L, () -> Optional.of(NEW))).as("from Redis").contains(OLD);

		elapse(follower, Duration.ofMillis(200));

		assertThat(cache.get(1L, () -> Optional.of(NEW))).as("600 + 200 ms past the last confirmed change")
			.contains(NEW);
	}

	@Test
	void aConfirmationReadLateCountsFromTheReadBeforeTheOneThatBroughtIt() {
		CacheInstance.Settings properties = CacheInstance.properties();
		instance(properties).cache("items", Long.class, Item.class).get(1L, () -> Optional.of(OLD));
		CacheInstance follower = instance(following(properties));
		CacheUnderTest<Long, Item> cache = follower.cache("items", Long.class, Item.class);
		confirm(follower, Duration.ZERO);
		// Appended while this instance does not read the stream (a stalled listener); read a second later.
		ManagerInternals.listener(follower.manager).stop();
		follower.manager.changeFeedCaughtUp(Duration.ZERO, null);
		elapse(follower, Duration.ofSeconds(1));
		ManagerInternals.listener(follower.manager).start();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> Duration.ZERO.equals(ManagerInternals.invalidationSilence(follower.manager)));

		assertThat(follower.manager.getChangeFeedSilence()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
		assertThat(cache.get(1L, () -> Optional.of(NEW))).as("not from Redis").contains(NEW);
	}

	@Test
	void onceTheFeedConfirmsAgainRedisAnswersAgain() {
		CacheInstance.Settings properties = following(CacheInstance.properties());
		CacheInstance other = instance(properties);
		CacheInstance instance = instance(properties);
		confirm(other, Duration.ZERO);
		CacheUnderTest<Long, Item> onOther = other.cache("items", Long.class, Item.class);
		onOther.get(1L, () -> Optional.of(OLD));
		onOther.get(2L, () -> Optional.of(OLD));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		elapse(instance, MAX_LAG.plusMillis(1));
		assertThat(cache.get(1L, () -> Optional.of(NEW))).as("the feed is behind: past Redis").contains(NEW);

		confirm(instance, Duration.ZERO);

		assertThat(cache.get(2L, () -> Optional.of(NEW))).as("from Redis").contains(OLD);
		assertThat(instance.count("tiered.cache.feed.behind.reads", "cache", "items")).isEqualTo(1);
	}

	@Test
	void aConfirmationIsAppendedOnlyWhileTheStreamHoldsTheCheckpointTheFeedLastMoved() {
		CacheInstance.Settings properties = following(CacheInstance.properties());
		CacheInstance feed = instance(properties);
		CacheInstance follower = instance(properties);
		assertThat(feed.manager.changeFeedCheckpoint()).isNull();
		assertThat(feed.manager.changeFeedLanded(null, "position-1")).isTrue();
		assertThat(feed.manager.changeFeedLanded(null, "position-2")).as("not from none any more").isFalse();
		assertThat(feed.manager.changeFeedLanded("position-1", "position-2")).isTrue();
		// What a stream's node that lost the feed's last writes (a failover) holds.
		feed.redis.opsForValue().set("{" + properties.keyPrefix() + ":invalidations}:feed", "position-1");
		long messages = feed.redis.opsForStream().size(properties.keyPrefix() + ":invalidations");

		assertThat(feed.manager.changeFeedCaughtUp(Duration.ZERO, "position-2")).isFalse();
		assertThat(feed.manager.changeFeedLanded("position-2", "position-3")).isFalse();

		assertThat(feed.redis.opsForStream().size(properties.keyPrefix() + ":invalidations")).isEqualTo(messages);
		assertThat(feed.manager.changeFeedCheckpoint()).isEqualTo("position-1");
		assertThat(feed.manager.changeFeedCaughtUp(Duration.ZERO, "position-1")).isTrue();
		awaitConfirmed(follower);
	}

	@Test
	void anInvalidationRedisRefusesSaysWhetherEveryInstanceWasToldToReadTheKeyFromTheLoader() {
		try (RedisServer redis = new RedisServer()) {
			redis.start();
			CacheInstance.Settings properties = CacheInstance.properties();
			CacheInstance feed = CacheInstance.start(redis, properties);
			CacheInstance other = CacheInstance.start(redis, properties);
			this.scope.closeAfter(feed);
			this.scope.closeAfter(other);
			CacheUnderTest<Long, Item> onOther = other.cache("items", Long.class, Item.class);
			onOther.get(1L, () -> Optional.of(OLD));
			String stream = properties.keyPrefix() + ":invalidations";
			// Only the stream takes writes, as with the node of the key's slot down until its replica is promoted.
			redis.command("ACL", "SETUSER", "default", "resetkeys", "~" + stream,
					"~" + InvalidationStream.sequenceKey(stream));

			assertThatExceptionOfType(InvalidationFailedException.class)
				.isThrownBy(() -> feed.cache("items", Long.class, Item.class).invalidate(1L))
				.satisfies((failed) -> assertThat(failed.isEveryInstanceTold()).isTrue());
			await().atMost(Duration.ofSeconds(5)).until(() -> !onOther.isInL1(1L));
			assertThat(onOther.get(1L, () -> Optional.of(NEW))).as("pending: from the loader").contains(NEW);

			redis.command("ACL", "SETUSER", "default", "resetkeys");
			assertThatExceptionOfType(InvalidationFailedException.class)
				.isThrownBy(() -> feed.cache("items", Long.class, Item.class).invalidate(2L))
				.satisfies((failed) -> assertThat(failed.isEveryInstanceTold()).as("the stream refused too").isFalse());
			redis.command("ACL", "SETUSER", "default", "allkeys");
		}
	}

	@Test
	void aValueTheStalledFeedRefusedIsNotServedStaleWhenTheDatabaseAnswersButTimesOut() {
		CacheInstance instance = instance(following(servingStale()));
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		// Committed past the application; the feed that would invalidate it has stalled and says nothing.
		elapse(instance, MAX_LAG.plusMillis(1));

		assertThatExceptionOfType(QueryTimeoutException.class).as("the database answers: OLD may be a write's old value")
			.isThrownBy(() -> cache.lookup(1L, () -> {
				throw new QueryTimeoutException("statement timed out under load");
			}));
		assertThat(instance.count("tiered.cache.stale.served", "cache", "items")).isZero();
	}

	@Test
	void whileTheDatabaseCannotBeReachedTheTiersServeWhatTheStalledFeedRefusedMarkedStale() {
		CacheInstance.Settings properties = following(servingStale());
		CacheInstance other = instance(properties);
		CacheInstance instance = instance(properties);
		confirm(instance, Duration.ZERO);
		other.cache("items", Long.class, Item.class).get(2L, () -> Optional.of(OLD));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		// Only this instance's L1 holds key 1 (Redis evicted it for memory).
		instance.redis.delete(cache.redisKey(1L));
		elapse(instance, MAX_LAG.plusMillis(1));
		Supplier<Optional<Item>> unreachable = new CountingLoader().unreachable();

		assertThat(cache.lookup(1L, unreachable)).as("from L1").isEqualTo(Lookup.stale(Optional.of(OLD), Source.L1));
		assertThat(cache.lookup(2L, unreachable)).as("from Redis").isEqualTo(Lookup.stale(Optional.of(OLD), Source.L2));
		assertThatExceptionOfType(CannotGetJdbcConnectionException.class).as("held by neither tier")
			.isThrownBy(() -> cache.lookup(3L, unreachable));
		assertThat(instance.count("tiered.cache.stale.served", "cache", "items")).isEqualTo(2);
	}

	@Test
	void aFullBulkheadWhileTheLastLoadCouldNotReachTheDatabaseServesWhatTheStalledFeedRefused() throws Exception {
		CacheUnderTest<Long, Item> cache = oneSlotBehindTheFeed();
		Lookup<Item> unreachable = cache.lookup(1L, new CountingLoader().unreachable());
		assertThat(unreachable.value()).contains(OLD);
		assertThat(unreachable.stale()).isTrue();

		try (ParkedLoad parked = ParkedLoad.of(cache, 3L)) {
			Lookup<Item> rejected = cache.lookup(2L, () -> Optional.of(NEW));
			assertThat(rejected.value()).as("its slot held by a load waiting for a connection").contains(OLD);
			assertThat(rejected.stale()).isTrue();
		}
	}

	@Test
	void whileTheDatabaseCannotBeReachedAReaderIsServedTheRefusedValueInsteadOfWaitingForAnothersReloadOfIt()
			throws Exception {
		CacheInstance instance = instance(following(servingStale()));
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		elapse(instance, MAX_LAG.plusMillis(1));
		assertThatExceptionOfType(CannotGetJdbcConnectionException.class)
			.isThrownBy(() -> cache.lookup(3L, new CountingLoader().unreachable()));
		CountingLoader database = new CountingLoader();

		try (ParkedLoad reload = ParkedLoad.of(cache, 1L)) {
			Lookup<Item> served = cache.lookup(1L, database.returning(NEW));

			assertThat(served.value()).as("not waiting for the reload parked on the database").contains(OLD);
			assertThat(served.stale()).isTrue();
			assertThat(database.calls()).isZero();
		}
	}

	@Test
	void whileTheDatabaseCannotBeReachedAValueServedStaleIsServedAgainWithoutALoadUntilTheBreakersWaitHasPassed() {
		CacheInstance instance = instance(following(servingStale()));
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		elapse(instance, MAX_LAG.plusMillis(1));
		CountingLoader database = new CountingLoader();
		Supplier<Optional<Item>> unreachable = database.unreachable();
		assertThat(cache.lookup(1L, unreachable)).as("Redis' copy").isEqualTo(Lookup.stale(Optional.of(OLD), Source.L2));
		assertThat(database.calls()).isEqualTo(1);

		instance.ticker.advance(Duration.ofMillis(999));
		assertThat(cache.lookup(1L, unreachable)).as("within the breaker's 1 s wait")
			.isEqualTo(Lookup.stale(Optional.of(OLD), Source.L1));
		assertThat(database.calls()).isEqualTo(1);

		instance.ticker.advance(Duration.ofMillis(1));
		assertThat(cache.lookup(1L, database.returning(NEW))).as("past it: the loader again, back")
			.isEqualTo(Lookup.fresh(Optional.of(NEW), Source.LOADER));
		assertThat(database.calls()).isEqualTo(2);
	}

	@Test
	void whileTheDatabaseCannotBeReachedAValueWhoseKeyRedisHoldsATombstoneForIsNotServedFromL1() {
		CacheInstance instance = instance(following(CacheInstance.properties()));
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		elapse(instance, MAX_LAG.plusMillis(1));
		// The reader's eviction of a committed write has landed in Redis; its announcement is not heard here yet.
		instance.redis.opsForValue().set(cache.redisKey(1L), JsonValueCodec.newTombstone());

		assertThatExceptionOfType(CannotGetJdbcConnectionException.class)
			.isThrownBy(() -> cache.lookup(1L, new CountingLoader().unreachable()));
		assertThat(instance.count("tiered.cache.stale.served", "cache", "items")).isZero();
	}

	@Test
	void whileAnotherLoadTriesTheUnreachableDatabaseAValueWhoseKeyRedisHoldsATombstoneForIsNotServedFromL1()
			throws Exception {
		CacheInstance instance = instance(following(CacheInstance.properties()));
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		elapse(instance, MAX_LAG.plusMillis(1));
		assertThatExceptionOfType(CannotGetJdbcConnectionException.class)
			.isThrownBy(() -> cache.lookup(2L, new CountingLoader().unreachable()));
		// The reader's eviction of a committed write has landed in Redis; its announcement is not heard here yet.
		instance.redis.opsForValue().set(cache.redisKey(1L), JsonValueCodec.newTombstone());

		try (ParkedLoad trying = ParkedLoad.of(cache, 3L)) {
			assertThatExceptionOfType(LoadRejectedException.class)
				.isThrownBy(() -> cache.lookup(1L, new CountingLoader().unreachable()))
				.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(LoadRejectedException.Reason.UNREACHABLE));
		}
		assertThat(instance.count("tiered.cache.stale.served", "cache", "items")).isZero();
	}

	@Test
	void whileTheDatabaseCannotBeReachedAValueServedStaleAndThenEvictedByAnotherInstanceIsNotServedAgain() {
		CacheInstance.Settings properties = following(servingStale());
		CacheInstance other = instance(properties);
		CacheInstance instance = instance(properties);
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		elapse(instance, MAX_LAG.plusMillis(1));
		assertThat(cache.lookup(1L, new CountingLoader().unreachable()).stale()).isTrue();

		other.cache("items", Long.class, Item.class).evict(1L);
		await().atMost(Duration.ofSeconds(5)).until(() -> !cache.isInL1(1L));
		assertThatExceptionOfType(CannotGetJdbcConnectionException.class).as("the write's old value, within the 1 s")
			.isThrownBy(() -> cache.lookup(1L, new CountingLoader().unreachable()));
	}

	@Test
	void aFullBulkheadWhileTheDatabaseAnswersServesNothingTheStalledFeedRefused() throws Exception {
		CacheUnderTest<Long, Item> cache = oneSlotBehindTheFeed();
		assertThat(cache.get(4L, () -> Optional.of(NEW))).contains(NEW);

		try (ParkedLoad parked = ParkedLoad.of(cache, 3L)) {
			assertThatExceptionOfType(LoadRejectedException.class)
				.isThrownBy(() -> cache.lookup(2L, () -> Optional.of(NEW)))
				.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(LoadRejectedException.Reason.BULKHEAD_FULL));
		}
	}

	@Test
	void aBreakerOpenedByTimeoutsServesNothingTheStalledFeedRefused() {
		CacheInstance instance = instance(following(CacheInstance.properties((settings) -> settings.cacheDefaults(
				settings.cacheDefaults().withStaleIfError(Duration.ofMinutes(1)).withLoaderCircuitBreaker(
						CircuitBreakerConfig.custom().minimumNumberOfCalls(2).slidingWindowSize(2).build())))));
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		elapse(instance, MAX_LAG.plusMillis(1));
		Supplier<Optional<Item>> timingOut = () -> {
			throw new QueryTimeoutException("statement timed out under load");
		};
		CircuitBreaker breaker = ManagerInternals.loaderGuard(instance.manager, "items").breaker();
		for (long key = 10; key < 20 && breaker.getState() != CircuitBreaker.State.OPEN; key++) {
			long id = key;
			assertThatExceptionOfType(RuntimeException.class).isThrownBy(() -> cache.lookup(id, timingOut));
		}
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);

		assertThatExceptionOfType(LoadRejectedException.class).as("the breaker is open; the database answers")
			.isThrownBy(() -> cache.lookup(1L, () -> Optional.of(NEW)))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(LoadRejectedException.Reason.CIRCUIT_OPEN));
	}

	@Test
	void whileTheDatabaseIsFoundOutOfReachAReadBehindTheFeedTakesNoLoadLockTheFleetWouldWaitOn() {
		CommandLog commands = new CommandLog();
		CacheInstance instance = CacheInstance.start(RedisServer.shared(),
				following(CacheInstance.properties((settings) -> settings.cacheDefaults(settings.cacheDefaults()
					.withStaleIfError(Duration.ofMinutes(1))))),
				commands);
		this.scope.closeAfter(instance);
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		elapse(instance, MAX_LAG.plusMillis(1));
		Supplier<Optional<Item>> unreachable = new CountingLoader().unreachable();
		assertThatExceptionOfType(RuntimeException.class).isThrownBy(() -> cache.lookup(10L, unreachable));
		commands.clear();

		assertThat(cache.lookup(1L, unreachable)).isEqualTo(Lookup.stale(Optional.of(OLD), Source.L2));
		assertThat(commands.naming(cache.redisKey(1L))).as("the value Redis holds, read without the get-or-lock step")
			.containsExactly("GET");
		assertThat(ManagerInternals.loaderGuard(instance.manager, "items").breaker().getState())
			.isEqualTo(CircuitBreaker.State.CLOSED);
	}

	@Test
	void whileTheDatabaseCannotBeReachedACacheThatServesNothingStaleServesWhatIsWithinItsTimeToLive() {
		CacheInstance.Settings properties = following(CacheInstance.properties((settings) -> settings
			.cacheDefaults(settings.cacheDefaults().withStaleIfError(Duration.ZERO))));
		CacheInstance other = instance(properties);
		CacheInstance instance = instance(properties);
		confirm(instance, Duration.ZERO);
		other.cache("items", Long.class, Item.class).get(2L, () -> Optional.of(OLD));
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		elapse(instance, MAX_LAG.plusMillis(1));
		Supplier<Optional<Item>> unreachable = new CountingLoader().unreachable();
		Supplier<Optional<Item>> timingOut = () -> {
			throw new QueryTimeoutException("statement timed out under load");
		};

		assertThat(cache.lookup(1L, unreachable)).as("from L1").isEqualTo(Lookup.stale(Optional.of(OLD), Source.L1));
		assertThat(cache.lookup(2L, unreachable)).as("from Redis").isEqualTo(Lookup.stale(Optional.of(OLD), Source.L2));
		assertThatExceptionOfType(QueryTimeoutException.class).as("the database answers")
			.isThrownBy(() -> cache.lookup(1L, timingOut));
	}

	/**
	 * Says, as the feed does every so often, that every change committed {@code lag} ago has been invalidated, until
	 * the instance heard it from a read sent after its watermark clock last moved.
	 */
	private static void confirm(CacheInstance instance, Duration lag) {
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			instance.manager.changeFeedCaughtUp(lag, null);
			Duration silence = instance.manager.getChangeFeedSilence();
			return silence != null && silence.compareTo(lag.plus(Duration.ofMillis(1))) < 0;
		});
	}

	/** Waits until the instance heard a confirmation no older than max-lag. */
	private static void awaitConfirmed(CacheInstance instance) {
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			Duration silence = instance.manager.getChangeFeedSilence();
			return silence != null && silence.compareTo(MAX_LAG) <= 0;
		});
	}

	/**
	 * A cache whose loader guard has one slot and no wait, following a feed that has stalled past max-lag, with
	 * keys 1 and 2 in L1 (their values refused by the gate from now on).
	 */
	private CacheUnderTest<Long, Item> oneSlotBehindTheFeed() {
		CacheInstance instance = instance(following(CacheInstance.properties((settings) -> settings.cacheDefaults(
				settings.cacheDefaults().withStaleIfError(Duration.ofMinutes(1)).withLoaderBulkhead(
						BulkheadConfig.custom().maxConcurrentCalls(1).maxWaitDuration(Duration.ZERO).build())))));
		confirm(instance, Duration.ZERO);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		assertThat(cache.get(1L, () -> Optional.of(OLD))).contains(OLD);
		assertThat(cache.get(2L, () -> Optional.of(OLD))).contains(OLD);
		elapse(instance, MAX_LAG.plusMillis(1));
		return cache;
	}

	/** A load of one key parked in its loader, holding its slot of the bulkhead until closed. */
	private record ParkedLoad(CountDownLatch release, Future<?> load, ExecutorService thread) implements AutoCloseable {

		static ParkedLoad of(CacheUnderTest<Long, Item> cache, long key) throws InterruptedException {
			CountDownLatch started = new CountDownLatch(1);
			CountDownLatch release = new CountDownLatch(1);
			ExecutorService thread = Executors.newSingleThreadExecutor();
			Future<?> load = thread.submit(() -> cache.get(key, () -> {
				started.countDown();
				Latches.awaitRelease(release);
				return Optional.of(NEW);
			}));
			assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
			return new ParkedLoad(release, load, thread);
		}

		@Override
		public void close() throws Exception {
			this.release.countDown();
			this.load.get(10, TimeUnit.SECONDS);
			this.thread.shutdown();
		}

	}

	/**
	 * Time passes for the gate: on the watermark clock (the feed's silence, L1's trust), on the clock of Redis
	 * freshness, and for every value Redis holds, whose database read time (on the Redis server's clock) moves back.
	 */
	private static void elapse(CacheInstance instance, Duration duration) {
		instance.watermark.advance(duration);
		instance.clock.advance(duration);
		for (String key : instance.redis.keys(instance.keyPrefix + ":v1:*")) {
			if (instance.redis.type(key) != DataType.STRING) {
				continue;
			}
			String raw = instance.redis.opsForValue().get(key);
			Matcher readAt = (raw != null) ? READ_AT.matcher(raw) : null;
			if (readAt != null && readAt.find()) {
				long ttl = instance.redis.getExpire(key, TimeUnit.MILLISECONDS);
				String older = raw.substring(0, readAt.start(1))
						+ (Long.parseLong(readAt.group(1)) - duration.toMillis()) + raw.substring(readAt.end(1));
				instance.redis.opsForValue().set(key, older, Duration.ofMillis(Math.max(ttl, 1)));
			}
		}
	}

	/** Stale-if-error on, as the service's caches have it. */
	private static CacheInstance.Settings servingStale() {
		return CacheInstance.properties((settings) -> settings
			.cacheDefaults(settings.cacheDefaults().withStaleIfError(Duration.ofMinutes(1))));
	}

	private static CacheInstance.Settings following(CacheInstance.Settings properties) {
		return properties.and((builder) -> builder.changeFeedMaxLag(MAX_LAG));
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(RedisServer.shared(), properties));
	}

}
