package dev.concertcache.tiered.autoconfigure.redis;

import java.time.Duration;
import java.util.EnumSet;
import java.util.function.Consumer;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.ClientOptions.DisconnectedBehavior;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions.RefreshTrigger;
import io.lettuce.core.resource.ExtendedKeepAliveSupport;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client options Boot's connection factory ends up with. No Redis needed: nothing here connects (the start-up
 * check is off; it has its own tests).
 */
class TieredCacheRedisClientAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(TieredCacheRedisClientAutoConfiguration.class, DataRedisAutoConfiguration.class))
		.withPropertyValues("tiered-cache.redis.startup-check.enabled=false");

	@Test
	void failsFastWhileDisconnectedWithABoundedQueue() {
		this.contextRunner.run(withClientOptions((options) -> {
			assertThat(options.getDisconnectedBehavior()).isEqualTo(DisconnectedBehavior.REJECT_COMMANDS);
			assertThat(options.getRequestQueueSize()).isEqualTo(TieredCacheRedisProperties.DEFAULT_REQUEST_QUEUE_SIZE);
			assertThat(options.isAutoReconnect()).isTrue();
			assertThat(options.getTimeoutOptions().isTimeoutCommands()).isTrue();
			assertThat(options.getTimeoutOptions().isApplyConnectionTimeout()).isTrue();
		}));
	}

	@Test
	void keepsBootsTimeoutsAndAddsKeepAlive() {
		this.contextRunner.withPropertyValues("spring.data.redis.timeout=250ms", "spring.data.redis.connect-timeout=500ms")
			.run((context) -> {
				LettuceClientConfiguration configuration = clientConfiguration(context);
				assertThat(configuration.getCommandTimeout()).isEqualTo(Duration.ofMillis(250));
				SocketOptions socket = configuration.getClientOptions().orElseThrow().getSocketOptions();
				assertThat(socket.getConnectTimeout()).isEqualTo(Duration.ofMillis(500));
				assertThat(socket.isKeepAlive()).isTrue();
				if (ExtendedKeepAliveSupport.isSupported()) {
					assertThat(socket.getKeepAlive().getIdle()).isEqualTo(Duration.ofSeconds(10));
					assertThat(socket.getKeepAlive().getInterval()).isEqualTo(Duration.ofSeconds(5));
					assertThat(socket.getKeepAlive().getCount()).isEqualTo(3);
				}
			});
	}

	@Test
	void connectTimeoutStaysLettucesDefaultWhenBootHasNone() {
		this.contextRunner.run(withClientOptions((options) -> assertThat(options.getSocketOptions().getConnectTimeout())
			.isEqualTo(SocketOptions.DEFAULT_CONNECT_TIMEOUT_DURATION)));
	}

	@Test
	void propertiesOverrideTheDefaults() {
		this.contextRunner
			.withPropertyValues("tiered-cache.redis.disconnected-behavior=accept-commands",
					"tiered-cache.redis.request-queue-size=100", "tiered-cache.redis.auto-reconnect=false",
					"tiered-cache.redis.keep-alive.enabled=false")
			.run(withClientOptions((options) -> {
				assertThat(options.getDisconnectedBehavior()).isEqualTo(DisconnectedBehavior.ACCEPT_COMMANDS);
				assertThat(options.getRequestQueueSize()).isEqualTo(100);
				assertThat(options.isAutoReconnect()).isFalse();
				assertThat(options.getSocketOptions().isKeepAlive()).isFalse();
			}));
	}

	@Test
	void keepAliveOfLessThanASecondIsRejected() {
		this.contextRunner.withPropertyValues("tiered-cache.redis.keep-alive.idle=500ms")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("tiered-cache.redis.keep-alive.idle"));
	}

	@Test
	void applicationCustomizersRunAfterAndWin() {
		this.contextRunner.withUserConfiguration(UserCustomizerConfiguration.class)
			.run(withClientOptions((options) -> assertThat(options.getRequestQueueSize()).isEqualTo(10)));
	}

	@Test
	void clusterGetsAdaptiveRefreshKeepsBootsRefreshPropertiesAndFollowsNoRedirect() {
		this.contextRunner
			.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000",
					"spring.data.redis.cluster.max-redirects=3",
					"spring.data.redis.lettuce.cluster.refresh.period=15s",
					"spring.data.redis.lettuce.cluster.refresh.dynamic-refresh-sources=false")
			.run(withClientOptions((options) -> {
				assertThat(options).isInstanceOf(ClusterClientOptions.class);
				ClusterClientOptions cluster = (ClusterClientOptions) options;
				assertThat(cluster.getMaxRedirects()).isZero();
				assertThat(cluster.getDisconnectedBehavior()).isEqualTo(DisconnectedBehavior.REJECT_COMMANDS);
				ClusterTopologyRefreshOptions refresh = cluster.getTopologyRefreshOptions();
				assertThat(refresh.getAdaptiveRefreshTriggers()).isEqualTo(EnumSet.allOf(RefreshTrigger.class));
				assertThat(refresh.getAdaptiveRefreshTimeout()).isEqualTo(Duration.ofSeconds(2));
				assertThat(refresh.isPeriodicRefreshEnabled()).isTrue();
				assertThat(refresh.getRefreshPeriod()).isEqualTo(Duration.ofSeconds(15));
				assertThat(refresh.useDynamicRefreshSources()).isFalse();
				assertThat(refresh.isCloseStaleConnections()).isTrue();
			}));
	}

	@Test
	void standaloneGetsPlainClientOptions() {
		this.contextRunner
			.run(withClientOptions((options) -> assertThat(options).isNotInstanceOf(ClusterClientOptions.class)));
	}

	@Test
	void clientNameDefaultsToTheApplicationName() {
		this.contextRunner.withPropertyValues("spring.application.name=concert-cache")
			.run((context) -> assertThat(clientConfiguration(context).getClientName()).contains("concert-cache"));
	}

	@Test
	void explicitClientNameWins() {
		this.contextRunner
			.withPropertyValues("spring.application.name=concert-cache", "spring.data.redis.client-name=api-7")
			.run((context) -> assertThat(clientConfiguration(context).getClientName()).contains("api-7"));
	}

	@Test
	void backsOffForJedis() {
		this.contextRunner.withPropertyValues("spring.data.redis.client-type=jedis")
			.run((context) -> assertThat(context).doesNotHaveBean(TieredCacheLettuceClientOptionsCustomizer.class)
				.doesNotHaveBean(RedisConnectionBudgetCheck.class));
	}

	@Test
	void startupCheckHasAnOffSwitch() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(RedisConnectionBudgetCheck.class));
	}

	@Test
	void literalDefaultsMatchLettuces() {
		TieredCacheRedisProperties properties = new TieredCacheRedisProperties();
		assertThat(properties.isAutoReconnect()).isEqualTo(ClientOptions.DEFAULT_AUTO_RECONNECT);
		assertThat(properties.getCluster().getRefreshTriggersReconnectAttempts())
			.isEqualTo(ClusterTopologyRefreshOptions.DEFAULT_REFRESH_TRIGGERS_RECONNECT_ATTEMPTS);
	}

	@Test
	void budgetCountsSharedAndDedicatedConnections() {
		TieredCacheRedisProperties properties = new TieredCacheRedisProperties();
		properties.setExpectedInstances(4);
		RedisConnectionBudget budget = RedisConnectionBudget.of(properties, poolDisabled(), false,
				getClass().getClassLoader());
		assertThat(budget.perInstance()).isEqualTo(2);
		assertThat(budget.total()).isEqualTo(8);
	}

	@Test
	void budgetCountsAnEnabledPoolOnTop() {
		DataRedisProperties dataRedis = poolDisabled();
		dataRedis.getLettuce().getPool().setEnabled(true);
		dataRedis.getLettuce().getPool().setMaxActive(8);
		RedisConnectionBudget budget = RedisConnectionBudget.of(new TieredCacheRedisProperties(), dataRedis, false,
				getClass().getClassLoader());
		assertThat(budget.perInstance()).isEqualTo(10);
		dataRedis.getLettuce().getPool().setMaxActive(-1);
		assertThat(RedisConnectionBudget
			.of(new TieredCacheRedisProperties(), dataRedis, false, getClass().getClassLoader())
			.bounded()).isFalse();
	}

	@Test
	void budgetCountsTheReactiveConnectionOfTheHealthIndicator() {
		RedisConnectionBudget budget = RedisConnectionBudget.of(new TieredCacheRedisProperties(), poolDisabled(), true,
				getClass().getClassLoader());
		assertThat(budget.perInstance()).isEqualTo(3);
		assertThat(budget.describe()).startsWith("3 connection(s) per instance (1 shared + 1 reactive (health) + 1 "
				+ "dedicated) x 1 instance(s) = 3");
	}

	private static DataRedisProperties poolDisabled() {
		DataRedisProperties properties = new DataRedisProperties();
		properties.getLettuce().getPool().setEnabled(false);
		return properties;
	}

	private static LettuceClientConfiguration clientConfiguration(AssertableApplicationContext context) {
		assertThat(context).hasNotFailed();
		return context.getBean(LettuceConnectionFactory.class).getClientConfiguration();
	}

	@Test
	void aStandaloneServerKeepsAPlainConnectionWithoutAReadFromSetting() {
		this.contextRunner.run((context) -> assertThat(clientConfiguration(context).getReadFrom()).isEmpty());
	}

	@Test
	void clusterRefreshesPeriodicallyWithoutBootsPeriodAndReadsFromPrimariesOnly() {
		this.contextRunner.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000").run((context) -> {
			assertThat(clientConfiguration(context).getReadFrom()).contains(io.lettuce.core.ReadFrom.UPSTREAM);
			ClusterTopologyRefreshOptions refresh = ((ClusterClientOptions) clientConfiguration(context)
				.getClientOptions()
				.orElseThrow()).getTopologyRefreshOptions();
			assertThat(refresh.isPeriodicRefreshEnabled()).isTrue();
			assertThat(refresh.getRefreshPeriod()).isEqualTo(Duration.ofSeconds(10));
		});
	}

	private static ContextConsumer<AssertableApplicationContext> withClientOptions(
			Consumer<ClientOptions> assertions) {
		return (context) -> assertions.accept(clientConfiguration(context).getClientOptions().orElseThrow());
	}

	@Configuration(proxyBeanMethods = false)
	static class UserCustomizerConfiguration {

		@Bean
		LettuceClientOptionsBuilderCustomizer userCustomizer() {
			return (builder) -> builder.requestQueueSize(10);
		}

	}

}
