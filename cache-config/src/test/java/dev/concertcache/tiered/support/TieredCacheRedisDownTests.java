package dev.concertcache.tiered.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.CommandTrap;
import dev.concertcache.testsupport.CommandTrap.Sent;
import dev.concertcache.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis killed under reads and writes: every read is answered from L1 or the loader, fast, while the breaker
 * is open; once Redis is back the tiers agree again without help (ADR 0014).
 */
class TieredCacheRedisDownTests {

	private static final int WARM = 20;

	@RegisterExtension
	final TestScope scope = new TestScope();

	private final RedisServer redis = this.scope.closeAfter(new RedisServer());

	private final Map<Long, Item> database = new ConcurrentHashMap<>();

	private final AtomicInteger loads = new AtomicInteger();

	private final ExecutorService threads = Executors.newFixedThreadPool(8);

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	@Test
	void readsNeverFailWhileRedisIsDownAndTiersAgreeAgainWhenItIsBack() throws Exception {
		this.redis.start();
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		for (long id = 1; id <= 2 * WARM; id++) {
			this.database.put(id, new Item(id, "v1"));
		}
		for (long id = 1; id <= WARM; id++) {
			onA.get(id, loader(id));
			onB.get(id, loader(id));
		}
		assertThat(this.loads).hasValue(WARM);
		this.loads.set(0);

		this.redis.kill();
		int reads = 400;
		AtomicInteger failures = new AtomicInteger();
		AtomicLong slowest = new AtomicLong();
		List<Future<?>> done = new ArrayList<>();
		for (int i = 0; i < reads; i++) {
			long id = 1 + (i % (2 * WARM));
			done.add(this.threads.submit(() -> {
				long started = System.nanoTime();
				try {
					assertThat(onA.get(id, loader(id))).contains(new Item(id, "v1"));
				}
				catch (Throwable ex) {
					failures.incrementAndGet();
				}
				slowest.accumulateAndGet(System.nanoTime() - started, Math::max);
			}));
		}
		for (Future<?> read : done) {
			read.get(10, TimeUnit.SECONDS);
		}
		assertThat(failures).as("failed reads").hasValue(0);
		assertThat(this.loads).as("cold keys loaded once each, warm ones served from L1").hasValue(WARM);
		assertThat(Duration.ofNanos(slowest.get())).as("slowest read").isLessThan(Duration.ofMillis(500));
		// The dropped connection closed Redis to reads until the listener confirms the server (ServerConfirmation,
		// ADR 0039, "The gate"): they go to the loader without waiting for Redis.

		// A write during the outage: A evicts its own L1 at once and keeps the Redis side for later.
		this.database.put(1L, new Item(1, "v2"));
		onA.evict(1L);
		assertThat(onA.get(1L, loader(1L))).contains(new Item(1, "v2"));
		assertThat(a.meters.find("tiered.cache.pending.evictions").gauge().value()).isEqualTo(1);
		assertThat(onB.get(1L, loader(1L))).as("B cannot know yet").contains(new Item(1, "v1"));

		this.redis.start();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			assertThat(a.meters.find("tiered.cache.pending.evictions").gauge().value()).isZero();
			assertThat(onB.get(1L, loader(1L))).contains(new Item(1, "v2"));
		});
		for (long id = 1; id <= 2 * WARM; id++) {
			assertThat(onA.get(id, loader(id))).isEqualTo(onB.get(id, loader(id)))
				.isEqualTo(Optional.of(this.database.get(id)));
		}
		// Evictions go past the breaker; reads that need Redis close it again.
		AtomicLong coldKey = new AtomicLong(1000);
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			long id = coldKey.incrementAndGet();
			this.database.put(id, new Item(id, "v1"));
			onA.get(id, loader(id));
			return ManagerInternals.circuitBreaker(a.manager).getState() == CircuitBreaker.State.CLOSED;
		});
	}

	@Test
	void whileTheStreamIsOutOfReachAnotherInstancesWriteIsServedOldForAtMostTheDisconnectMaxAge() {
		this.redis.start();
		CacheInstance.Settings properties = CacheInstance
			.properties((settings) -> settings.disconnectMaxAge(Duration.ofMillis(50)));
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		CacheUnderTest<Long, Item> onB = b.cache("items", Long.class, Item.class);
		this.database.put(1L, new Item(1, "v1"));
		onB.get(1L, loader(1L));

		this.redis.kill();
		// Its listener's connection dropped with the others; what it heard before vouches for nothing now.
		await().atMost(Duration.ofSeconds(5)).until(() -> !b.manager.isListening());
		this.database.put(1L, new Item(1, "v2"));
		onA.evict(1L);
		b.watermark.advance(Duration.ofMillis(50));
		assertThat(onB.get(1L, loader(1L))).as("within the disconnect max-age: L1").contains(new Item(1, "v1"));
		b.watermark.advance(Duration.ofMillis(1));

		assertThat(onB.get(1L, loader(1L))).as("past it: read through").contains(new Item(1, "v2"));
	}

	@Test
	void readsStayFastWhileRedisHangsBecauseTimeoutsOpenTheBreaker() throws Exception {
		this.redis.start();
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		for (long id = 1; id <= 2 * WARM; id++) {
			this.database.put(id, new Item(id, "v1"));
		}
		for (long id = 1; id <= WARM; id++) {
			onA.get(id, loader(id));
		}
		this.loads.set(0);
		// Redis accepts connections but answers nothing for 5 s: every call runs into the 250 ms timeout.
		a.redis.execute((org.springframework.data.redis.core.RedisCallback<Object>) (connection) -> connection
			.execute("CLIENT", "PAUSE".getBytes(), "5000".getBytes(), "ALL".getBytes()));
		long started = System.nanoTime();
		AtomicInteger failures = new AtomicInteger();
		List<Future<?>> done = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			long id = 1 + (i % (2 * WARM));
			done.add(this.threads.submit(() -> {
				try {
					assertThat(onA.get(id, loader(id))).contains(new Item(id, "v1"));
				}
				catch (Throwable ex) {
					failures.incrementAndGet();
				}
			}));
		}
		for (Future<?> read : done) {
			read.get(10, TimeUnit.SECONDS);
		}
		Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
		assertThat(failures).as("failed reads").hasValue(0);
		assertThat(this.loads).hasValue(WARM);
		assertThat(ManagerInternals.circuitBreaker(a.manager).getState()).isEqualTo(CircuitBreaker.State.OPEN);
		// 20 cold keys on 8 threads, one 250 ms timeout each at most before the breaker opened: no pile-up.
		assertThat(elapsed).as("400 reads while Redis hangs").isLessThan(Duration.ofSeconds(2));
	}

	@Test
	void instanceStartsAndServesReadsWhileRedisIsDown() {
		this.redis.start();
		this.redis.kill();
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = CacheInstance.startWithoutWaiting(this.redis, properties);
		this.scope.closeAfter(a);
		this.database.put(1L, new Item(1, "v1"));
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		assertThat(onA.get(1L, loader(1L))).contains(new Item(1, "v1"));
		assertThat(onA.get(1L, loader(1L))).contains(new Item(1, "v1"));
		assertThat(this.loads).hasValue(1);
		this.redis.start();
		await().atMost(Duration.ofSeconds(20)).until(a.manager::isListening);
		// It filled L1 while it could not hear from other instances: that L1 is dropped once it can.
		assertThat(onA.isInL1(1L)).isFalse();
	}

	@Test
	void aValueReadFromRedisAcrossADisconnectIsNotUsedForTheConnectionMayHaveComeBackOnAnotherServer() {
		this.redis.start();
		CacheInstance.Settings properties = CacheInstance.properties();
		CacheInstance a = instance(properties);
		CacheInstance b = instance(properties);
		CacheUnderTest<Long, Item> onA = a.cache("items", Long.class, Item.class);
		b.cache("items", Long.class, Item.class).get(1L, () -> Optional.of(new Item(1, "old")));
		String valueKey = onA.redisKey(1L);
		String old = a.redis.opsForValue().get(valueKey);
		// Another loader holds the key's lock, so A's read waits for its value and reads the key again.
		a.redis.delete(valueKey);
		a.redis.opsForValue().set(valueKey.replaceFirst(":items:g", ":items:lock:g"), "another-loader");
		long disconnects = ManagerInternals.serverConfirmation(a.manager).disconnects();
		// Before A asks again (its second get-or-lock step, after waiting for the holder), the connection drops and
		// comes back where the key holds an old value (a promoted replica).
		CommandTrap.Rule reconnected = a.commands.nth(2, Sent.script().and(Sent.naming(valueKey)), () -> {
			a.redis.opsForValue().set(valueKey, old);
			a.redis.delete(valueKey.replaceFirst(":items:g", ":items:lock:g"));
			killClients();
			await().atMost(Duration.ofSeconds(5))
				.until(() -> ManagerInternals.serverConfirmation(a.manager).disconnects() > disconnects);
		});
		this.database.put(1L, new Item(1, "new"));

		assertThat(onA.get(1L, loader(1L))).contains(new Item(1, "new"));
		assertThat(reconnected.fired()).hasValue(1);
		assertThat(this.loads).hasValue(1);
	}

	@Test
	void theInvalidationListenerKeepsOneConnectionHoweverOftenItsConnectionIsKilled() {
		this.redis.start();
		CacheInstance a = instance(CacheInstance.properties());
		a.cache("items", Long.class, Item.class).get(1L, loader(1L));
		// Every connection counts, the data connection too (opened by the read above): a leak of either shows.
		int connections = clients();
		for (int kill = 0; kill < 3; kill++) {
			killClients();
			await().atMost(Duration.ofSeconds(10)).until(() -> a.manager.isListening() && clients() == connections);
		}

		// A connection it replaced would come back by itself within its reconnect delay.
		await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> clients() == connections);
	}

	@Test
	void theInvalidationListenersConnectionKeepsItsNameWhenLettuceReconnectsIt() {
		this.redis.start();
		CacheInstance a = instance(CacheInstance.properties());
		String name = "name=tiered-cache-invalidations-";
		await().atMost(Duration.ofSeconds(5)).until(() -> clientsNamed(name) == 1);
		for (int kill = 0; kill < 5; kill++) {
			killClients();
			await().atMost(Duration.ofSeconds(10)).until(() -> a.manager.isListening() && clientsNamed(name) == 1);
		}
	}

	private long clientsNamed(String name) {
		return this.redis.command("CLIENT", "LIST").lines().filter((line) -> line.contains(name)).count();
	}

	/** How many client connections {@code CLIENT LIST} shows, redis-cli's own (asking) left out. */
	private int clients() {
		return (int) this.redis.command("CLIENT", "LIST")
			.lines()
			.filter((line) -> !line.contains("cmd=client|list"))
			.count();
	}

	/** Kills every client connection (redis-cli's own excepted: CLIENT KILL skips its sender). */
	private void killClients() {
		this.redis.command("CLIENT", "KILL", "TYPE", "normal");
	}

	private Supplier<Optional<Item>> loader(long id) {
		return () -> {
			this.loads.incrementAndGet();
			return Optional.ofNullable(this.database.get(id));
		};
	}

	private CacheInstance instance(CacheInstance.Settings properties) {
		return this.scope.closeAfter(CacheInstance.start(this.redis, properties));
	}

}
