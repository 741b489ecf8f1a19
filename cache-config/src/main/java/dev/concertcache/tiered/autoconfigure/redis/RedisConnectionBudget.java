package dev.concertcache.tiered.autoconfigure.redis;

import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;

/**
 * How many connections to one Redis server the application can open: per instance, and for all expected instances
 * together (ADR 0020).
 *
 * @param shared connections multiplexing all regular commands (Lettuce shares one)
 * @param reactive the reactive shared connection, opened by Boot's Redis health indicator (1) or not at all (0)
 * @param dedicated long-lived connections of blocking readers and subscribers
 * @param pooled upper bound of the Lettuce pool Boot enables, 0 without a pool, negative for an unbounded pool
 * @param instances expected application instances
 */
public record RedisConnectionBudget(int shared, int reactive, int dedicated, int pooled, int instances) {

	private static final String COMMONS_POOL2 = "org.apache.commons.pool2.ObjectPool";

	public RedisConnectionBudget {
		Assert.isTrue(shared >= 0 && reactive >= 0 && dedicated >= 0, "connection counts must not be negative");
		Assert.isTrue(instances >= 1, "'tiered-cache.redis.expected-instances' must be at least 1");
	}

	/**
	 * Returns the budget of the given configuration. A pool counts with its {@code max-active} on top of the shared
	 * and dedicated connections (Spring Data Redis borrows the shared connection from the pool too, so this is an
	 * upper bound); Boot enables the pool when {@code spring.data.redis.lettuce.pool.enabled} is {@code true}, or
	 * unset while commons-pool2 is on the classpath.
	 * @param reactiveConnection whether something opens the reactive shared connection (Boot's Redis health
	 * indicator is reactive whenever Reactor is on the classpath, and Lettuce brings Reactor)
	 */
	public static RedisConnectionBudget of(TieredCacheRedisProperties properties,
			DataRedisProperties dataRedisProperties, boolean reactiveConnection, ClassLoader classLoader) {
		DataRedisProperties.Pool pool = dataRedisProperties.getLettuce().getPool();
		Boolean enabled = pool.getEnabled();
		boolean poolEnabled = (enabled != null) ? enabled : ClassUtils.isPresent(COMMONS_POOL2, classLoader);
		int pooled = poolEnabled ? pool.getMaxActive() : 0;
		return new RedisConnectionBudget(TieredCacheRedisProperties.SHARED_CONNECTIONS, reactiveConnection ? 1 : 0,
				properties.getDedicatedConnections(), pooled, properties.getExpectedInstances());
	}

	/** Whether the number of connections has an upper bound at all (an unbounded pool has none). */
	public boolean bounded() {
		return this.pooled >= 0;
	}

	/** Connections of one instance, at most. */
	public int perInstance() {
		Assert.state(bounded(), "An unbounded pool has no connection budget");
		return this.shared + this.reactive + this.dedicated + this.pooled;
	}

	/** Connections of all expected instances together, at most. */
	public long total() {
		return (long) perInstance() * this.instances;
	}

	/** The budget as a sentence for log messages. */
	public String describe() {
		String reactive = (this.reactive != 0) ? " + " + this.reactive + " reactive (health)" : "";
		String pool = (this.pooled != 0) ? " + " + this.pooled + " pooled" : "";
		return perInstance() + " connection(s) per instance (" + this.shared + " shared" + reactive + " + "
				+ this.dedicated + " dedicated" + pool + ") x " + this.instances + " instance(s) = " + total();
	}

}
