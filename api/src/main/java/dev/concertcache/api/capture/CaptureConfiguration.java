package dev.concertcache.api.capture;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.concertcache.api.concert.ConcertCaches;
import dev.concertcache.tiered.TieredCacheConfiguration;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.loader.LoaderReachability;
import dev.concertcache.tiered.support.TieredCacheManagerBuilder;
import dev.concertcache.tiered.autoconfigure.TieredCacheManagerCustomizer;
import dev.concertcache.tiered.autoconfigure.TieredCacheProperties;

/**
 * Change data capture, unless {@code concert-cache.capture.mode} is {@code off}: connection settings default to
 * those of {@code spring.datasource.*}; the lease lives under the cache's Redis key prefix, and the checkpoint
 * beside the cache's invalidation stream.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${concert-cache.capture.mode:off}'.toLowerCase() != 'off'")
class CaptureConfiguration {

	/** Replication client ids are drawn from here: far above the small ids servers are usually given. */
	private static final long SERVER_ID_LOW = 1L << 30;

	private static final Pattern JDBC_URL = Pattern
		.compile("jdbc:(?:mariadb|mysql)://\\[?([^:/?,\\]]+)\\]?(?::(\\d+))?/([^?;]*).*");

	/** The database server whose binary log is read, with the capture's credentials. */
	@Bean
	BinlogServer binlogServer(CaptureProperties properties, Environment environment) {
		String url = environment.getRequiredProperty("spring.datasource.url");
		Matcher matcher = JDBC_URL.matcher(url);
		boolean parsed = matcher.matches();
		String host = (properties.host() != null) ? properties.host() : parsed ? matcher.group(1) : null;
		if (host == null) {
			throw new IllegalStateException("Cannot derive the capture host from spring.datasource.url " + url
					+ ": set concert-cache.capture.host and .port");
		}
		int port = (properties.port() != null) ? properties.port()
				: (parsed && matcher.group(2) != null) ? Integer.parseInt(matcher.group(2)) : 3306;
		String username = (properties.username() != null) ? properties.username()
				: environment.getProperty("spring.datasource.username");
		String password = (properties.password() != null) ? properties.password()
				: environment.getProperty("spring.datasource.password");
		return new BinlogServer(host, port, username, password, properties.connectTimeout(), properties.sslMode());
	}

	/** The positions of this service's commits, for causal reads (ADR 0038). */
	@Bean
	CommitPositions commitPositions(BinlogServer server) {
		return new CommitPositions(server);
	}

	@Bean
	BinlogCapture binlogCapture(CaptureProperties properties, Environment environment, BinlogServer server,
			StringRedisTemplate redis, ConcertCaches concertCaches, ObjectProvider<TieredCacheManager> cacheManager,
			LoaderReachability loaderReachability, ObjectProvider<MeterRegistry> meterRegistry,
			ObjectProvider<TieredCacheProperties> cacheProperties, Clock clock) {
		Matcher matcher = JDBC_URL.matcher(environment.getRequiredProperty("spring.datasource.url"));
		String schema = (properties.tables().schema() != null) ? properties.tables().schema()
				: matcher.matches() ? matcher.group(3) : "";
		TieredCacheProperties caches = cacheProperties.getIfAvailable();
		String keyPrefix = (caches != null && caches.keyPrefix() != null) ? caches.keyPrefix()
				: TieredCacheManagerBuilder.DEFAULT_KEY_PREFIX;
		long serverId = (properties.serverId() != null) ? properties.serverId() : randomServerId();
		return new BinlogCapture(properties, server, redis, keyPrefix,
				new CapturedTables(server, schema, properties.tables()), concertCaches, cacheManager.getObject(),
				loaderReachability, new CaptureMetrics(meterRegistry.getIfAvailable(SimpleMeterRegistry::new)), clock,
				serverId, stalenessBound(caches));
	}

	/** Told by the caches' loads and by the reader when the database cannot be reached (ADR 0030). */
	@Bean
	LoaderReachability loaderReachability() {
		return new LoaderReachability();
	}

	/**
	 * In mode {@code required}, every instance's tiers go by the reader's confirmations (ADR 0039): a change another
	 * application committed is never served from a tier longer than {@code progress.max-lag} after the reader
	 * last confirmed. In mode {@code optional} the service may run without a reader, so nothing waits for one. In
	 * either mode, a reader that cannot connect tells the caches' loads that the database is out of reach.
	 */
	@Bean
	TieredCacheManagerCustomizer captureFollowedByTheCaches(CaptureProperties properties,
			LoaderReachability loaderReachability) {
		return (builder) -> {
			builder.loaderReachability(loaderReachability);
			if (properties.mode() == CaptureProperties.Mode.REQUIRED) {
				builder.changeFeedMaxLag(properties.progress().maxLag());
			}
		};
	}

	/** {@code capture} in {@code /actuator/health}, after this bean's name. */
	@Bean
	HealthIndicator captureHealthIndicator(BinlogCapture capture) {
		return capture::health;
	}

	static long randomServerId() {
		return ThreadLocalRandom.current().nextLong(SERVER_ID_LOW, 1L << 32);
	}

	/** The longest any tier keeps an entry: how stale a change by another application can be seen without capture. */
	private static Duration stalenessBound(TieredCacheProperties caches) {
		TieredCacheConfiguration builtIn = TieredCacheConfiguration.defaultConfig();
		Duration l1 = builtIn.l1Ttl();
		Duration l2 = builtIn.l2Ttl();
		Stream<Duration> overrides = Stream.empty();
		if (caches != null) {
			// Configured defaults replace the built-in ones; a named cache's own TTLs may be longer still.
			l1 = (caches.defaults().l1Ttl() != null) ? caches.defaults().l1Ttl() : l1;
			l2 = (caches.defaults().l2Ttl() != null) ? caches.defaults().l2Ttl() : l2;
			overrides = caches.caches().values().stream().flatMap((cache) -> Stream.of(cache.l1Ttl(), cache.l2Ttl()));
		}
		return Stream.concat(Stream.of(l1, l2), overrides)
			.filter(java.util.Objects::nonNull)
			.max(Duration::compareTo)
			.orElse(Duration.ZERO);
	}

}
