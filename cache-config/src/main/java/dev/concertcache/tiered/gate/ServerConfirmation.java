package dev.concertcache.tiered.gate;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Whether the Redis servers the connections reach are known to be the ones this instance's generations and L1 come
 * from (ADR 0039): a connection may come back on a replica just promoted, which can lack the last tombstones, and
 * reads do not use Redis until the server is confirmed.
 */
public final class ServerConfirmation {

	private final AtomicLong disconnects = new AtomicLong();

	private final AtomicLong confirmed = new AtomicLong();

	/** Returns the disconnects so far, this one included. */
	public long disconnected() {
		return this.disconnects.incrementAndGet();
	}

	/** The disconnects so far: a {@code run_id} check that starts after this call confirms them. */
	public long disconnects() {
		return this.disconnects.get();
	}

	/** The server was checked after the first {@code disconnects} disconnects. */
	public void confirmed(long disconnects) {
		this.confirmed.accumulateAndGet(disconnects, Math::max);
	}

	public boolean isConfirmed() {
		return this.confirmed.get() >= this.disconnects.get();
	}

	/**
	 * A stamp for a read of Redis that starts now, {@code -1} if reads must not use Redis now; see {@link #holds}.
	 */
	public long stamp() {
		long disconnects = this.disconnects.get();
		return (this.confirmed.get() >= disconnects) ? disconnects : -1;
	}

	/**
	 * Whether nothing dropped since {@code stamp} was taken, so that what a read found in Redis meanwhile can be
	 * used: a read that passed the check just before a failover may still be routed to the promoted replica.
	 */
	public boolean holds(long stamp) {
		return stamp >= 0 && this.disconnects.get() == stamp;
	}

}
