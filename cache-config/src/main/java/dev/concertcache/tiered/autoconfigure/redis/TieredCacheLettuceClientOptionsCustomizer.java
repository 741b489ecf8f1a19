package dev.concertcache.tiered.autoconfigure.redis;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SocketOptions.KeepAliveOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.resource.ExtendedKeepAliveSupport;

import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties.Lettuce.Cluster.Refresh;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.core.Ordered;
import org.springframework.util.Assert;

/**
 * Tunes the {@link ClientOptions} Boot builds for its {@code LettuceConnectionFactory}: fail fast while disconnected,
 * a bounded request queue, keepalive, and cluster topology refresh.
 * <p>
 * It customizes Boot's builder rather than replacing the options, so everything Boot derived from
 * {@code spring.data.redis.*} survives. The one part it does replace, {@link SocketOptions}, it rebuilds with Boot's
 * {@code connect-timeout}; the cluster refresh options it rebuilds with Boot's
 * {@code lettuce.cluster.refresh.period} and {@code dynamic-refresh-sources}. It runs before customizers of the
 * application, which can still override any of it.
 */
public class TieredCacheLettuceClientOptionsCustomizer implements LettuceClientOptionsBuilderCustomizer, Ordered {

	/** Order of this customizer: early, so that application customizers run after it and win. */
	public static final int ORDER = 0;

	private final TieredCacheRedisProperties properties;

	private final DataRedisProperties dataRedisProperties;

	public TieredCacheLettuceClientOptionsCustomizer(TieredCacheRedisProperties properties,
			DataRedisProperties dataRedisProperties) {
		Assert.isTrue(properties.getRequestQueueSize() > 0, "'tiered-cache.redis.request-queue-size' must be positive");
		this.properties = properties;
		this.dataRedisProperties = dataRedisProperties;
	}

	@Override
	public void customize(ClientOptions.Builder builder) {
		builder.disconnectedBehavior(this.properties.getDisconnectedBehavior())
			.requestQueueSize(this.properties.getRequestQueueSize())
			.autoReconnect(this.properties.isAutoReconnect())
			.socketOptions(socketOptions())
			// Boot sets the same; stated here because it matters: the timeout comes from the connection
			// (spring.data.redis.timeout), so a dedicated blocking connection can raise its own with setTimeout.
			.timeoutOptions(TimeoutOptions.builder().timeoutCommands().connectionTimeout().build());
		if (builder instanceof ClusterClientOptions.Builder cluster) {
			TieredCacheRedisProperties.Cluster properties = this.properties.getCluster();
			// No redirect followed: after a failover a MOVED leads to the promoted replica, which may lack the dead
			// primary's last tombstones, before the refresh that reports the failover (ADR 0039). The command fails
			// instead (a read goes to the loader) and the cache refreshes the topology.
			cluster.topologyRefreshOptions(topologyRefreshOptions(properties)).maxRedirects(0);
		}
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	private SocketOptions socketOptions() {
		SocketOptions.Builder socket = SocketOptions.builder();
		Duration connectTimeout = this.dataRedisProperties.getConnectTimeout();
		if (connectTimeout != null) {
			socket.connectTimeout(connectTimeout);
		}
		TieredCacheRedisProperties.KeepAlive keepAlive = this.properties.getKeepAlive();
		if (!keepAlive.isEnabled()) {
			return socket.keepAlive(false).build();
		}
		if (!ExtendedKeepAliveSupport.isSupported()) {
			// Setting idle/interval/count where the transport cannot apply them fails every connect.
			return socket.keepAlive(true).build();
		}
		return socket.keepAlive(KeepAliveOptions.builder()
			.enable()
			.idle(wholeSeconds(keepAlive.getIdle(), "idle"))
			.interval(wholeSeconds(keepAlive.getInterval(), "interval"))
			.count(keepAlive.getCount())
			.build()).build();
	}

	private ClusterTopologyRefreshOptions topologyRefreshOptions(TieredCacheRedisProperties.Cluster properties) {
		Refresh bootRefresh = this.dataRedisProperties.getLettuce().getCluster().getRefresh();
		ClusterTopologyRefreshOptions.Builder refresh = ClusterTopologyRefreshOptions.builder()
			.dynamicRefreshSources(bootRefresh.isDynamicRefreshSources())
			.enableAllAdaptiveRefreshTriggers()
			.adaptiveRefreshTriggersTimeout(properties.getAdaptiveRefreshTimeout())
			.refreshTriggersReconnectAttempts(properties.getRefreshTriggersReconnectAttempts())
			.closeStaleConnections(true);
		// Periodic as well as adaptive: the failover rule (ADR 0039) needs every instance to see a new primary.
		refresh.enablePeriodicRefresh(
				(bootRefresh.getPeriod() != null) ? bootRefresh.getPeriod() : properties.getRefreshPeriod());
		return refresh.build();
	}

	private static Duration wholeSeconds(Duration duration, String name) {
		Assert.isTrue(duration.getSeconds() >= 1 && duration.getNano() == 0,
				() -> "'tiered-cache.redis.keep-alive." + name + "' must be whole seconds, at least 1s, but was "
						+ duration);
		return duration;
	}

}
