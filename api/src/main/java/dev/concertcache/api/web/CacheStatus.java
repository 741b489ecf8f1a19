package dev.concertcache.api.web;

import dev.concertcache.tiered.TieredCache.Lookup;

/**
 * The RFC 9211 {@code Cache-Status} field of cached reads: whether this service's cache ({@code concert-cache})
 * answered and which tier did, or that the value was stale and served because the database failed (stale-if-error,
 * ADR 0031). {@code detail} is the RFC's free-form parameter.
 */
public final class CacheStatus {

	/** The response header field (RFC 9211). */
	public static final String HEADER = "Cache-Status";

	/** Answered from this instance's memory (or a load of this instance already in flight). */
	public static final String HIT_L1 = "concert-cache; hit; detail=l1";

	/** Answered from Redis. */
	public static final String HIT_L2 = "concert-cache; hit; detail=l2";

	/** Neither tier had it: loaded from the database and stored. */
	public static final String MISS = "concert-cache; fwd=miss; stored";

	/**
	 * This service's cache had a stored value past its freshness lifetime ({@code fwd=stale}) and served it because
	 * the database could not give a fresh one ({@code detail=stale-if-error}).
	 */
	public static final String STALE = "concert-cache; fwd=stale; detail=stale-if-error";

	private CacheStatus() {
	}

	/** The field value for {@code lookup}: no allocation, one of the constants above. */
	public static String of(Lookup<?> lookup) {
		if (lookup.stale()) {
			return STALE;
		}
		return switch (lookup.source()) {
			case L1 -> HIT_L1;
			case L2 -> HIT_L2;
			case LOADER -> MISS;
		};
	}

}
