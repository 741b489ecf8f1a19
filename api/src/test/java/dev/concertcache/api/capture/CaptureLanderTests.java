package dev.concertcache.api.capture;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import com.github.benmanes.caffeine.cache.Ticker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.concertcache.api.concert.ConcertCaches.Stale;
import dev.concertcache.testsupport.MariaDbServer;
import dev.concertcache.testsupport.RedisServer;
import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.TieredCacheManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The lander and the confirmer against a real Redis, whose access rules refuse the writes of chosen keys (as a
 * down cluster node refuses the keys of its slots), on a ticker the tests move: a landing retries only the keys
 * Redis refused, each after a wait that doubles up to a bound; a whole-cache invalidation that landed is never
 * sent again; a confirmation's lag counts the wait for the checkpoint lock a landing holds.
 */
class CaptureLanderTests {

	private static final Duration RETRY = Duration.ofMillis(25);

	private static final Duration MAX_RETRY = Duration.ofMillis(250);

	private static final BinlogPosition START = BinlogPosition.file("db:3306", "binlog.000001", 4);

	private static final RedisServer redisServer = new RedisServer();

	private static LettuceConnectionFactory factory;

	private static StringRedisTemplate redis;

	private final AtomicLong now = new AtomicLong();

	private final Ticker ticker = this.now::get;

	private DefaultTieredCacheManager manager;

	/** What the next committed changes make stale, as the concert feature would say. */
	private List<Stale> nextStale = List.of();

	/** Invalidations sent to Redis, by entry, refused or not. */
	private final Map<Stale, Integer> attempts = new ConcurrentHashMap<>();

	/** Invalidations sent to Redis, in the order they were sent. */
	private final List<Stale> sent = new CopyOnWriteArrayList<>();

	/** Runs in each invalidation before it is sent. */
	private Runnable beforeEachInvalidation = () -> {
	};

	/** Through where everything landed, as the lander last told its connection. */
	private final AtomicReference<BinlogPosition> landedThrough = new AtomicReference<>();

	@BeforeAll
	static void startRedis() {
		redisServer.start();
		redis = redis();
	}

	@AfterAll
	static void stopRedis() {
		if (factory != null) {
			factory.destroy();
		}
		redisServer.close();
	}

	@BeforeEach
	void emptyRedisAndAManager() {
		redisServer.command("ACL", "SETUSER", "default", "allkeys");
		redisServer.command("FLUSHALL");
		// The manager's own retries of refused evictions wait an hour: every retry seen here is the lander's.
		this.manager = DefaultTieredCacheManager.builder(factory)
			.keyPrefix("lander-test")
			.retryInterval(Duration.ofHours(1))
			.meterRegistry(new SimpleMeterRegistry())
			.build();
		this.manager.start();
	}

	@AfterEach
	void stopManager() {
		redisServer.command("ACL", "SETUSER", "default", "allkeys");
		this.manager.stop();
	}

	@Test
	void onlyTheKeysRedisRefusedAreSentAgainEachAfterAWaitThatDoublesUpToTheBound() {
		// Writes of every key but those of entry 3 of cache "a": its node is down, the others are up.
		refuseWritesExcept("~lander-test:v1:a:generation", "~lander-test:v1:a:shapes", "~*{a:[^3]}", "~*{a:??*}");
		Lander lander = lander(this.manager, START);
		BinlogPosition position = BinlogPosition.file("db:3306", "binlog.000001", 100);
		this.nextStale = List.of(a(1), a(2), a(3));
		lander.committed(changed(1, 2, 3), position, 0, 100);

		lander.land();
		assertThat(this.attempts).containsOnly(Map.entry(a(1), 1), Map.entry(a(2), 1), Map.entry(a(3), 1));

		// Due after 25, 50, 100, 200, 250, 250 ms: one more attempt at each, never before, and of entry 3 only.
		List<Long> sentAt = new ArrayList<>();
		long deadline = Duration.ofMillis(25 + 50 + 100 + 200 + 250 + 250).toNanos();
		for (long t = 0; t <= deadline; t += Duration.ofMillis(1).toNanos()) {
			this.now.set(t);
			int before = this.attempts.get(a(3));
			lander.land();
			if (this.attempts.get(a(3)) > before) {
				sentAt.add(Duration.ofNanos(t).toMillis());
			}
		}
		assertThat(sentAt).containsExactly(25L, 75L, 175L, 375L, 625L, 875L);
		assertThat(this.attempts).contains(Map.entry(a(1), 1), Map.entry(a(2), 1));
		assertThat(this.landedThrough.get()).as("not landed while a key before it is refused").isNull();

		// A change committed when the refused key is due again is sent in the same landing, beside it: a slow node
		// delays only its own keys.
		this.now.addAndGet(MAX_RETRY.toNanos());
		this.nextStale = List.of(a(4));
		lander.committed(changed(4), position, 0, 100);
		this.sent.clear();
		lander.land();
		assertThat(this.sent).containsExactlyInAnyOrder(a(4), a(3));

		redisServer.command("ACL", "SETUSER", "default", "allkeys");
		this.now.addAndGet(MAX_RETRY.toNanos());
		lander.land();
		assertThat(this.landedThrough.get()).as("landed once the refused key landed").isEqualTo(position);
		assertThat(this.manager.changeFeedCheckpoint()).isEqualTo(position.format());
		this.now.addAndGet(MAX_RETRY.toNanos());
		lander.land();
		assertThat(this.attempts).containsOnly(Map.entry(a(1), 1), Map.entry(a(2), 1), Map.entry(a(3), 9),
				Map.entry(a(4), 1));
	}

	@Test
	void theInvalidationsOfOneTransactionAreSentSideBySide() {
		// Each invalidation waits until all three are in flight: sent one after another, the first would time out.
		CyclicBarrier allInFlight = new CyclicBarrier(3);
		this.beforeEachInvalidation = () -> {
			try {
				allInFlight.await(10, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				throw new IllegalStateException("not sent side by side", ex);
			}
		};
		Lander lander = lander(this.manager, START);
		BinlogPosition position = BinlogPosition.file("db:3306", "binlog.000001", 100);
		this.nextStale = List.of(a(1), a(2), a(3));
		lander.committed(changed(1, 2, 3), position, 0, 100);

		lander.land();

		assertThat(this.attempts).containsOnly(Map.entry(a(1), 1), Map.entry(a(2), 1), Map.entry(a(3), 1));
		assertThat(this.landedThrough.get()).isEqualTo(position);
	}

	@Test
	void aWholeCacheInvalidationThatLandedIsNeverSentAgainWhileAnotherCachesIsRefused() {
		this.manager.getCache("a", Long.class, String.class);
		this.manager.getCache("b", Long.class, String.class);
		// The generation counter of cache "b" is on the down node, that of cache "a" is not.
		refuseWritesExcept("~lander-test:v1:a:*", "~*{*");
		Lander lander = lander(this.manager, START);
		TransactionChanges ddl = new TransactionChanges();
		ddl.everything();
		this.nextStale = List.of(new Stale("a", null), new Stale("b", null));
		lander.committed(ddl, BinlogPosition.file("db:3306", "binlog.000001", 200), 0, 200);

		lander.land();
		String generation = redis.opsForValue().get("lander-test:v1:a:generation");
		assertThat(generation).as("moved by the one evict-all of cache a").isNotNull();
		for (int i = 0; i < 20; i++) {
			this.now.addAndGet(MAX_RETRY.toNanos());
			lander.land();
		}

		assertThat(this.attempts).containsOnly(Map.entry(new Stale("a", null), 1), Map.entry(new Stale("b", null), 21));
		assertThat(redis.opsForValue().get("lander-test:v1:a:generation")).isEqualTo(generation);
		assertThat(this.landedThrough.get()).as("not landed while cache b's invalidation is refused").isNull();
	}

	@Test
	void aConfirmationCountsTheWaitForTheCheckpointLockALandingHolds() throws Exception {
		MariaDbServer database = MariaDbServer.shared();
		BinlogServer server = new BinlogServer("127.0.0.1", database.port(), MariaDbServer.USER,
				MariaDbServer.PASSWORD, Duration.ofSeconds(5), SslMode.DISABLE);
		CountDownLatch parked = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		AtomicReference<Duration> delivered = new AtomicReference<>();
		TieredCacheManager feed = new TieredCacheManager() {

			@Override
			public <K, V> dev.concertcache.tiered.TieredCache<K, V> getCache(String name, Class<K> keyType,
					Class<V> valueType) {
				return CaptureLanderTests.this.manager.getCache(name, keyType, valueType);
			}

			@Override
			public boolean changeFeedLanded(@Nullable String previous, String checkpoint) {
				// The landing thread inside the checkpoint lock, in a slow Redis script.
				parked.countDown();
				awaitQuietly(release);
				return CaptureLanderTests.this.manager.changeFeedLanded(previous, checkpoint);
			}

			@Override
			public boolean changeFeedCaughtUp(Duration lag, @Nullable String checkpoint) {
				delivered.set(lag);
				return CaptureLanderTests.this.manager.changeFeedCaughtUp(lag, checkpoint);
			}

		};
		BinlogPosition start = server.currentPosition();
		Lander lander = lander(feed, start);
		lander.committed(new TransactionChanges(), start, 0, 0);
		Thread landing = new Thread(lander::land, "landing");
		try (Confirmer confirmer = new Confirmer(server.positionProbe(), this.ticker)) {
			landing.start();
			assertThat(parked.await(10, TimeUnit.SECONDS)).isTrue();
			Thread confirming = new Thread(() -> confirmer.confirm(lander), "confirming");
			confirming.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> confirming.getState() == Thread.State.BLOCKED);
			// The server's position was read at 0; the landing holds the lock for two seconds more.
			this.now.addAndGet(Duration.ofSeconds(2).toNanos());
			release.countDown();
			landing.join(10_000);
			confirming.join(10_000);
		}
		finally {
			release.countDown();
		}
		assertThat(delivered.get()).isEqualTo(Duration.ofSeconds(2));
	}

	/**
	 * A lander from {@code start} whose invalidations are counted, on caches of the manager; {@code feed} for
	 * checkpoints and confirmations.
	 */
	private Lander lander(TieredCacheManager feed, BinlogPosition start) {
		StaleCaches caches = new StaleCaches() {

			@Override
			public List<Stale> stale(TransactionChanges changes) {
				return CaptureLanderTests.this.nextStale;
			}

			@Override
			public void invalidate(Stale stale) {
				CaptureLanderTests.this.beforeEachInvalidation.run();
				CaptureLanderTests.this.attempts.merge(stale, 1, Integer::sum);
				CaptureLanderTests.this.sent.add(stale);
				var cache = CaptureLanderTests.this.manager.getCache(stale.cache(), Long.class, String.class);
				if (stale.key() == null) {
					cache.invalidateAll();
				}
				else {
					cache.invalidate((Long) stale.key());
				}
			}

		};
		Lander.Landing landing = new Lander.Landing(caches, feed, new CaptureMetrics(new SimpleMeterRegistry()),
				Clock.systemUTC(), this.ticker, 1000, RETRY, MAX_RETRY, LandingThread.senders());
		return new Lander(new Lander.Connection() {

			@Override
			public boolean ended() {
				return false;
			}

			@Override
			public void end(Exception why) {
				throw new AssertionError("the connection ended: " + why);
			}

			@Override
			public void checkpointed(BinlogPosition position) {
				CaptureLanderTests.this.landedThrough.set(position);
			}

		}, landing, start, null);
	}

	private static TransactionChanges changed(long... concerts) {
		TransactionChanges changes = new TransactionChanges();
		for (long id : concerts) {
			changes.concert(id);
		}
		return changes;
	}

	private static Stale a(long id) {
		return new Stale("a", id);
	}

	/**
	 * Lets the default user (every client here) write only the stream, the lease and the keys {@code patterns}
	 * match; reads stay allowed everywhere.
	 */
	private static void refuseWritesExcept(String... patterns) {
		List<String> rules = new ArrayList<>(List.of("ACL", "SETUSER", "default", "resetkeys", "%R~*",
				"~lander-test:invalidations", "~{lander-test:invalidations}:*", "~{lander-test:capture}:*",
				"~{lander-test:v1:*"));
		rules.addAll(List.of(patterns));
		redisServer.command(rules.toArray(String[]::new));
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			latch.await(1, TimeUnit.MINUTES);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static StringRedisTemplate redis() {
		if (redis == null) {
			redisServer.start();
			factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redisServer.port()),
					LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
			factory.afterPropertiesSet();
			factory.start();
			redis = new StringRedisTemplate(factory);
		}
		return redis;
	}

}
