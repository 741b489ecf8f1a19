package dev.concertcache.api.capture;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The capture's meters, {@code concert.cache.capture.*}. The lag starts at the binlog header's commit timestamp, which
 * has 1 s resolution on MariaDB.
 */
class CaptureMetrics {

	private final MeterRegistry registry;

	private final Timer lag;

	private final Counter reconnects;

	private final Counter retries;

	private final Counter replays;

	private final AtomicLong position = new AtomicLong();

	private final AtomicLong leader = new AtomicLong();

	CaptureMetrics(MeterRegistry registry) {
		this.registry = registry;
		this.lag = Timer.builder("concert.cache.capture.lag")
			.description("From a transaction's commit timestamp (binlog header, whole seconds) to its invalidations "
					+ "published")
			.publishPercentileHistogram()
			.maximumExpectedValue(Duration.ofSeconds(30))
			.register(registry);
		this.reconnects = Counter.builder("concert.cache.capture.reconnects")
			.description("Binlog connections opened again after a failure")
			.register(registry);
		this.retries = Counter.builder("concert.cache.capture.retries")
			.description("Invalidations or positions sent again to Redis on the same binlog connection")
			.register(registry);
		this.replays = Counter.builder("concert.cache.capture.replays")
			.description("Binlog reads started again from the checkpoint the invalidation stream's node holds, which "
					+ "was not the reader's last: the node lost its last writes (a failover) or another reader moved it")
			.register(registry);
		Gauge.builder("concert.cache.capture.position", this.position, AtomicLong::get)
			.description("Offset in the current binlog file of the last transaction processed")
			.register(registry);
		Gauge.builder("concert.cache.capture.leader", this.leader, AtomicLong::get)
			.description("1 while this instance holds the lease and reads the binlog")
			.register(registry);
	}

	void rows(String table, String type, int count) {
		Counter.builder("concert.cache.capture.events")
			.description("Row changes read from the binlog")
			.tag("table", table)
			.tag("type", type)
			.register(this.registry)
			.increment(count);
	}

	void committed(long commitEpochMillis, long nowEpochMillis, long offset) {
		this.lag.record(Duration.ofMillis(Math.max(0, nowEpochMillis - commitEpochMillis)));
		this.position.set(offset);
	}

	void position(long offset) {
		this.position.set(offset);
	}

	void reconnect() {
		this.reconnects.increment();
	}

	void replay() {
		this.replays.increment();
	}

	void retry() {
		this.retries.increment();
	}

	void leader(boolean leader) {
		this.leader.set(leader ? 1 : 0);
	}

	void positionLost(String reason) {
		Counter.builder("concert.cache.capture.position.lost")
			.description("Flushes of every cache tier because no usable binlog position was stored")
			.tag("reason", reason)
			.register(this.registry)
			.increment();
	}

}
