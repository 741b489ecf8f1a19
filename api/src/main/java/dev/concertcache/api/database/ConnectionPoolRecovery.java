package dev.concertcache.api.database;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.stereotype.Component;

import dev.concertcache.tiered.support.DefaultTieredCacheManager;

/**
 * Lets the connection pool reconnect as soon as the database is back (ADR 0030). While it is down, HikariCP's
 * connection creator keeps retrying to reach {@code minimum-idle} and doubles its pause each time, up to 5 s;
 * after the database returns, the pool then stays empty for up to 5 s and every miss fails with 503 although
 * the database answers. So while a cache's loader circuit breaker is open (the database is known to be down)
 * the pool's minimum is 0: the creator stops, and each trial load of the half-open breaker starts a fresh one,
 * which connects at once when the database is back. The configured minimum returns when every breaker is closed
 * (each cache has its own: ADR 0030).
 */
@Component
class ConnectionPoolRecovery implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(ConnectionPoolRecovery.class);

	private final ObjectProvider<DefaultTieredCacheManager> caches;

	private final ObjectProvider<DataSource> dataSource;

	ConnectionPoolRecovery(ObjectProvider<DefaultTieredCacheManager> caches, ObjectProvider<DataSource> dataSource) {
		this.caches = caches;
		this.dataSource = dataSource;
	}

	@Override
	public void afterSingletonsInstantiated() {
		DefaultTieredCacheManager manager = this.caches.getIfUnique();
		if (manager == null || !(this.dataSource.getIfUnique() instanceof HikariDataSource pool)) {
			return;
		}
		int minimumIdle = pool.getMinimumIdle();
		Set<String> open = ConcurrentHashMap.newKeySet();
		for (String cache : manager.getCacheNames()) {
			manager.getLoaderCircuitBreaker(cache).ifPresent((breaker) -> follow(breaker, pool, minimumIdle, open));
		}
	}

	private static void follow(CircuitBreaker breaker, HikariDataSource pool, int minimumIdle, Set<String> open) {
		breaker.getEventPublisher().onStateTransition((event) -> {
			switch (event.getStateTransition().getToState()) {
				case OPEN, FORCED_OPEN -> {
					open.add(breaker.getName());
					setMinimumIdle(pool, 0);
				}
				case CLOSED -> {
					open.remove(breaker.getName());
					if (open.isEmpty()) {
						setMinimumIdle(pool, minimumIdle);
					}
				}
				default -> {
				}
			}
		});
	}

	private static void setMinimumIdle(HikariDataSource pool, int minimumIdle) {
		// The data source is the configuration its pool reads; minimum-idle may change at run time.
		if (pool.getMinimumIdle() != minimumIdle) {
			pool.setMinimumIdle(minimumIdle);
			logger.info("Connection pool minimum-idle " + minimumIdle
					+ ((minimumIdle == 0) ? ": the database is down, no retries in the background"
							: ": the database is back"));
		}
	}

}
