package dev.concertcache.tiered.autoconfigure.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.concertcache.testsupport.RedisServer;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettucePoolingClientConfiguration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * The "ERR max number of clients reached" of seed 004, reproduced against a real redis-server limited to
 * {@value #MAX_CLIENTS} clients, and shown impossible with this auto-configuration (ADR 0020).
 * <ul>
 * <li>The naive setups (a connection per request; an unshared pool larger than the limit) turn concurrency into TCP
 * connections and fail with the max-clients error.</li>
 * <li>The tuned setup serves the same burst, and 2000 GETs in flight at once (200 times the limit), over one
 * connection, without errors and without opening a single connection while doing so.</li>
 * <li>When the server refuses connections or the connection is lost, every command fails with the refusal instead of
 * waiting for its command timeout, and the client recovers on its own once the server is back. A wrong or missing
 * password stops start-up with a clear message, and fails a command with the server's refusal when the check is
 * off.</li>
 * </ul>
 * No assertion reads a clock: on a shared 2-core machine how long a refusal takes says more about the scheduler
 * than about the client. "Fails instead of waiting" is asserted by what the failure is: a command that waited
 * for its timeout ends in a {@link QueryTimeoutException} (Lettuce's {@code RedisCommandTimeoutException}), a
 * refused one in a {@link RedisConnectionFailureException} naming the refusal. A command that hung would keep
 * {@link Burst} from finishing within its 2 minutes. The figures each test prints (slowest call, burst time) are
 * the ones quoted in ADR 0020.
 */
@ExtendWith(OutputCaptureExtension.class)
class MaxClientsReproductionTests {

	private static final int MAX_CLIENTS = 10;

	private static final String MAX_CLIENTS_ERROR = "max number of clients reached";

	/** Lettuce's words for a connection the server closed before the handshake handler was registered. */
	private static final String HANDSHAKE_NOT_REGISTERED = "RedisHandshakeHandler not registered";

	/**
	 * Command and connect timeout of every setup here: generous, so that only a command that waits for one (queued
	 * while disconnected, or hung) reaches it, never a refusal that a busy machine delays (production uses 250 ms
	 * and 500 ms; what fails fast here does not depend on them).
	 */
	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final String KEY = "concert:1";

	private static final String VALUE = "{\"id\":1,\"title\":\"Seed 004\"}";

	private final List<AutoCloseable> resources = new ArrayList<>();

	private RedisServer redis;

	@AfterEach
	void release() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@Test
	void naiveConnectionPerRequestHitsMaxClients() throws Exception {
		startRedis("--maxclients", String.valueOf(MAX_CLIENTS));
		LettuceConnectionFactory factory = naiveFactory(LettuceClientConfiguration.builder()
			.commandTimeout(TIMEOUT)
			.build());
		StringRedisTemplate template = new StringRedisTemplate(factory);
		Burst burst = Burst.run(200, 5, () -> template.opsForValue().get(KEY));
		long rejected = RawRedis.infoLong(this.redis.port(), "stats", "rejected_connections");
		report("naive, connection per request, 200 threads x 5 GETs", burst, rejected);
		assertThat(burst.failuresWithRootCauseContaining(MAX_CLIENTS_ERROR)).isPositive();
		assertThat(burst.failures()).allSatisfy((failure) -> assertThat(failure)
			.isInstanceOf(RedisConnectionFailureException.class));
		assertThat(rejected).isPositive();
	}

	@Test
	void naiveUnsharedPoolLargerThanTheLimitHitsMaxClients() throws Exception {
		startRedis("--maxclients", String.valueOf(MAX_CLIENTS));
		GenericObjectPoolConfig<io.lettuce.core.api.StatefulConnection<?, ?>> pool = new GenericObjectPoolConfig<>();
		pool.setMaxTotal(64);
		pool.setMaxIdle(64);
		pool.setMaxWait(Duration.ofSeconds(1));
		LettuceConnectionFactory factory = naiveFactory(LettucePoolingClientConfiguration.builder()
			.poolConfig(pool)
			.commandTimeout(TIMEOUT)
			.build());
		StringRedisTemplate template = new StringRedisTemplate(factory);
		Burst burst = Burst.run(200, 5, () -> template.opsForValue().get(KEY));
		// The pool keeps its connections idle, and they take every slot: even this probe would be refused.
		factory.destroy();
		long rejected = RawRedis.infoLong(this.redis.port(), "stats", "rejected_connections");
		report("naive, unshared pool of 64, 200 threads x 5 GETs", burst, rejected);
		assertThat(burst.failuresWithRootCauseContaining(MAX_CLIENTS_ERROR)).isPositive();
		assertThat(rejected).isPositive();
	}

	@Test
	void tunedClientServesABurstFarLargerThanMaxClientsOverOneConnection() throws Exception {
		startRedis("--maxclients", String.valueOf(MAX_CLIENTS));
		// Same command timeout as the naive setups, so that only the connection model differs.
		tunedContext().run((context) -> {
			assertThat(context).hasNotFailed();
			StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
			assertThat(template.opsForValue().get(KEY)).isEqualTo(VALUE);
			long connectionsBefore = RawRedis.infoLong(this.redis.port(), "stats", "total_connections_received");
			// The burst that broke both naive setups, through the same blocking RedisTemplate path.
			Burst blocking = Burst.run(200, 5, () -> template.opsForValue().get(KEY));
			report("tuned, 200 threads x 5 GETs", blocking, -1);
			// 2000 GETs in flight at once on the shared connection, 10 times over. Issued asynchronously: 2000
			// blocked OS threads on a 2-core machine would measure the scheduler, not the client.
			List<Object> concurrent = new ArrayList<>();
			try (RedisConnection connection = context.getBean(RedisConnectionFactory.class).getConnection()) {
				@SuppressWarnings("unchecked")
				RedisClusterAsyncCommands<byte[], byte[]> async = (RedisClusterAsyncCommands<byte[], byte[]>) connection
					.getNativeConnection();
				for (int round = 0; round < 10; round++) {
					List<RedisFuture<byte[]>> inFlight = new ArrayList<>();
					for (int i = 0; i < 2000; i++) {
						inFlight.add(async.get(KEY.getBytes(StandardCharsets.UTF_8)));
					}
					for (RedisFuture<byte[]> get : inFlight) {
						concurrent.add(new String(get.get(5, TimeUnit.SECONDS), StandardCharsets.UTF_8));
					}
				}
			}
			System.out.println("MaxClientsReproductionTests | tuned, 10 x 2000 concurrent GETs in flight: "
					+ concurrent.size() + " ok");
			// The probes below open one connection each; count them out.
			long connectionsDuringBursts = RawRedis.infoLong(this.redis.port(), "stats", "total_connections_received")
					- connectionsBefore - 1;
			long connectedClients = RawRedis.infoLong(this.redis.port(), "clients", "connected_clients");
			long rejected = RawRedis.infoLong(this.redis.port(), "stats", "rejected_connections");
			List<String> clients = RawRedis.clientList(this.redis.port());
			System.out.println("MaxClientsReproductionTests | tuned: connected_clients " + connectedClients
					+ " (including the INFO probe), connections opened during the bursts " + connectionsDuringBursts
					+ ", rejected_connections " + rejected + ", clients " + clients);
			assertThat(blocking.failures()).isEmpty();
			assertThat(blocking.results()).hasSize(1000).containsOnly(VALUE);
			assertThat(concurrent).hasSize(20_000).containsOnly(VALUE);
			assertThat(connectionsDuringBursts).isZero();
			assertThat(connectedClients).isLessThanOrEqualTo(3);
			assertThat(rejected).isZero();
			assertThat(clients).singleElement().asString().contains("name=concert-cache");
		});
	}

	@Test
	void tunedClientFailsFastWhileTheServerRefusesConnections(CapturedOutput output) throws Exception {
		startRedis("--maxclients", String.valueOf(MAX_CLIENTS));
		List<RawRedis> occupied = RawRedis.occupyAllSlots(this.redis.port(), 2 * MAX_CLIENTS);
		occupied.forEach(this.resources::add);
		assertThat(occupied).hasSize(MAX_CLIENTS);
		tunedContext().run((context) -> {
			assertThat(context).hasNotFailed();
			// The refusal as the server words it, or as Lettuce does when the socket closes before its handshake
			// handler is registered (see below).
			assertThat(output).contains("Redis connection budget not checked");
			assertThat(output.toString()).containsAnyOf(MAX_CLIENTS_ERROR, HANDSHAKE_NOT_REGISTERED);
			StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
			Burst sequential = Burst.run(1, 50, () -> template.opsForValue().get(KEY));
			report("tuned, server full, 1 thread x 50 GETs", sequential, -1);
			// Each command tries to open the shared connection and is refused: mostly with the server's error; when
			// the server closes the socket before Lettuce has registered its handshake handler, with Lettuce's
			// "RedisHandshakeHandler not registered". Both are connection failures, both arrive at once.
			// None is a command that waited for its timeout: each one is refused.
			assertThat(sequential.successes()).isZero();
			assertThat(sequential.failures()).hasSize(50)
				.allSatisfy(MaxClientsReproductionTests::isARefusalNotATimeout);
			assertThat(sequential.failuresWithRootCauseContaining(MAX_CLIENTS_ERROR)).isPositive();
			// The request threads of one instance (server.jetty.threads.max) at once. Spring Data Redis serializes
			// attempts to open the shared connection under a lock, so a thread may wait for the attempts queued
			// before it (about 64 x 2-4 ms); none waits for a command timeout. The circuit breaker of the cache
			// (ADR 0014) is what removes this wait.
			Burst concurrent = Burst.run(64, 5, () -> template.opsForValue().get(KEY));
			report("tuned, server full, 64 threads x 5 GETs", concurrent, -1);
			assertThat(concurrent.successes()).isZero();
			assertThat(concurrent.failures()).hasSize(320)
				.allSatisfy(MaxClientsReproductionTests::isARefusalNotATimeout);
			assertThat(concurrent.failuresWithRootCauseContaining(MAX_CLIENTS_ERROR)).isPositive();
			// Slots free again: the next command connects, no restart needed.
			occupied.forEach(RawRedis::close);
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(20))
				.ignoreExceptions()
				.until(() -> VALUE.equals(template.opsForValue().get(KEY)));
		});
	}

	@Test
	void tunedClientRejectsCommandsAtOnceWhileDisconnectedAndReconnects() throws Exception {
		startRedis("--maxclients", String.valueOf(MAX_CLIENTS));
		tunedContext().run((context) -> {
			StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
			assertThat(template.opsForValue().get(KEY)).isEqualTo(VALUE);
			this.redis.kill();
			// A command written before the client saw the socket close may still end otherwise; once it has seen
			// it, the client is disconnected.
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> String.valueOf(Burst.rootCause(catchThrowable(() -> template.opsForValue().get(KEY)))
					.getMessage()).contains("Commands are rejected"));
			Burst disconnected = Burst.run(1, 50, () -> template.opsForValue().get(KEY));
			report("tuned, server killed, 1 thread x 50 GETs", disconnected, -1);
			// Rejected at once while disconnected, not queued until the command timeout (Lettuce's default).
			assertThat(disconnected.successes()).isZero();
			assertThat(disconnected.failures()).hasSize(50).allSatisfy((failure) -> {
				isNotATimeout(failure);
				assertThat(Burst.rootCause(failure)).hasMessageContaining("Commands are rejected");
			});
			this.redis.start();
			seed();
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(20))
				.ignoreExceptions()
				.until(() -> VALUE.equals(template.opsForValue().get(KEY)));
		});
	}

	@Test
	void wrongPasswordIsAStartupErrorNotAHang() {
		startRedis("--requirepass", "secret");
		tunedContext().withPropertyValues("spring.data.redis.password=wrong").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining("Redis rejected the configured credentials")
				.rootCause()
				.hasMessageContaining("WRONGPASS");
		});
		tunedContext()
			.withPropertyValues("spring.data.redis.password=wrong", "tiered-cache.redis.startup-check.enabled=false")
			.run((context) -> {
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				long begin = System.nanoTime();
				Throwable failure = catchThrowable(() -> template.opsForValue().get(KEY));
				long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin);
				System.out.println("Wrong password: " + Burst.rootCause(failure) + " after " + tookMillis + " ms");
				// The server's refusal, not a connect or command timeout.
				isARefusalNotATimeout(failure);
				assertThat(failure).rootCause().hasMessageContaining("WRONGPASS");
			});
	}

	@Test
	void missingPasswordIsAStartupError() {
		startRedis("--requirepass", "secret");
		tunedContext().run((context) -> assertThat(context.getStartupFailure())
			.hasMessageContaining("Redis rejected the configured credentials")
			.rootCause()
			.hasMessageContaining("NOAUTH"));
		tunedContext().withPropertyValues("spring.data.redis.password=secret")
			.run((context) -> assertThat(context.getBean(StringRedisTemplate.class).opsForValue().get(KEY))
				.isEqualTo(VALUE));
	}

	private void startRedis(String... arguments) {
		this.redis = new RedisServer(arguments);
		this.redis.start();
		seed();
	}

	private void seed() {
		try (RawRedis raw = RawRedis.connect(this.redis.port())) {
			String auth = raw.command("AUTH secret");
			assertThat(auth.equals("+OK") || auth.contains("without any password configured")).as(auth).isTrue();
			assertThat(raw.command("SET " + KEY + " '" + VALUE + "'")).isEqualTo("+OK");
		}
	}

	private LettuceConnectionFactory naiveFactory(LettuceClientConfiguration clientConfiguration) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()), clientConfiguration);
		factory.setShareNativeConnection(false);
		factory.afterPropertiesSet();
		this.resources.add(factory::destroy);
		return factory;
	}

	/** The auto-configuration with the {@code spring.data.redis} block of {@code api}'s application.yml. */
	private ApplicationContextRunner tunedContext() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(TieredCacheRedisClientAutoConfiguration.class,
					DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
					"spring.data.redis.port=" + this.redis.port(), "spring.data.redis.timeout=" + TIMEOUT,
					"spring.data.redis.connect-timeout=" + TIMEOUT,
					"spring.data.redis.client-name=concert-cache",
					"spring.data.redis.lettuce.shutdown-timeout=100ms",
					"spring.data.redis.lettuce.pool.enabled=false");
	}

	/** A connection failure that is not a timeout: the server refused it. */
	private static void isARefusalNotATimeout(Throwable failure) {
		assertThat(failure).isInstanceOf(RedisConnectionFailureException.class);
		isNotATimeout(failure);
	}

	/**
	 * No timeout anywhere in the failure's causes: the command did not wait for {@code spring.data.redis.timeout}
	 * (which Spring Data Redis reports as a {@link QueryTimeoutException}) nor for the connect timeout, both
	 * {@link #TIMEOUT}.
	 */
	private static void isNotATimeout(Throwable failure) {
		assertThat(failure).isNotInstanceOf(QueryTimeoutException.class);
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			assertThat(cause.getClass().getSimpleName()).as("a cause of %s", failure).doesNotContain("Timeout");
		}
	}

	private static void report(String scenario, Burst burst, long rejectedConnections) {
		System.out.println("MaxClientsReproductionTests | " + scenario + ": " + burst.summary()
				+ ((rejectedConnections >= 0) ? ", rejected_connections " + rejectedConnections : ""));
	}

}
