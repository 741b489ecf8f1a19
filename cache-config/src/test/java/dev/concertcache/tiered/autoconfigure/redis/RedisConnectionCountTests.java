package dev.concertcache.tiered.autoconfigure.redis;

import java.util.ArrayList;
import java.util.List;

import dev.concertcache.testsupport.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rows of the connection budget in ADR 0020 that come from Spring rather than from the cache: what one instance
 * opens, counted with {@code CLIENT LIST} on a real server.
 */
class RedisConnectionCountTests {

	private RedisServer redis;

	@BeforeEach
	void startRedis() {
		this.redis = new RedisServer();
		this.redis.start();
	}

	@AfterEach
	void stopRedis() {
		this.redis.close();
	}

	@Test
	void regularCommandsFromManyThreadsShareOneConnection() {
		contextRunner().run((context) -> {
			StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
			List<Thread> threads = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				String key = "count:" + i;
				Thread thread = new Thread(() -> template.opsForValue().set(key, "x"));
				threads.add(thread);
				thread.start();
			}
			for (Thread thread : threads) {
				thread.join();
			}
			assertThat(namedClients()).hasSize(1);
		});
	}

	@Test
	void reactiveConnectionOfTheHealthIndicatorIsASecondOne() {
		// Boot's Redis health indicator is the reactive one whenever Reactor is on the classpath, and Lettuce
		// brings Reactor: the first /actuator/health opens a second, reactive shared connection.
		contextRunner().run((context) -> {
			context.getBean(StringRedisTemplate.class).opsForValue().get("count:any");
			ReactiveRedisConnectionFactory factory = context.getBean(LettuceConnectionFactory.class);
			try (ReactiveRedisConnection connection = factory.getReactiveConnection()) {
				connection.ping().block();
			}
			assertThat(namedClients()).hasSize(2);
		});
	}

	private List<String> namedClients() {
		return RawRedis.clientList(this.redis.port())
			.stream()
			.filter((client) -> client.contains("name=budget"))
			.toList();
	}

	private ApplicationContextRunner contextRunner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(TieredCacheRedisClientAutoConfiguration.class,
					DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
					"spring.data.redis.port=" + this.redis.port(), "spring.data.redis.client-name=budget",
					"spring.data.redis.lettuce.pool.enabled=false");
	}

}
