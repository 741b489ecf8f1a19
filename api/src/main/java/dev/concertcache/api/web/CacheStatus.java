package dev.concertcache.api.web;

import org.springframework.http.ResponseEntity;

import dev.concertcache.tiered.TieredCache.Lookup;

/**
 * 200 responses of cached reads. A value served stale because the database failed (stale-if-error, ADR 0031)
 * says so in an RFC 9211 {@code Cache-Status} field: {@value #STALE}. Fresh values carry no such field.
 */
public final class CacheStatus {

	/** The response header field (RFC 9211). */
	public static final String HEADER = "Cache-Status";

	/**
	 * This service's cache ({@code concert-cache}) had a stored value past its freshness lifetime ({@code fwd=stale})
	 * and served it because the database could not give a fresh one ({@code detail=stale-if-error}).
	 */
	public static final String STALE = "concert-cache; fwd=stale; detail=stale-if-error";

	private CacheStatus() {
	}

	/**
	 * 200 with {@code body}, marked stale if {@code lookup} was.
	 */
	public static <T> ResponseEntity<T> ok(Lookup<?> lookup, T body) {
		ResponseEntity.BodyBuilder response = ResponseEntity.ok();
		if (lookup.stale()) {
			response.header(HEADER, STALE);
		}
		return response.body(body);
	}

}
