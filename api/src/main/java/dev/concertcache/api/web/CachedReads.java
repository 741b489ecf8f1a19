package dev.concertcache.api.web;

import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.CacheControl;
import org.springframework.http.ETag;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

import dev.concertcache.api.ApiProperties;
import dev.concertcache.tiered.TieredCache.Lookup;

/**
 * Responses of cached reads with HTTP caching (ADR 0034): a strong {@code ETag} made once per cached value
 * ({@link CachedJsonBodies}), {@code Cache-Control} per cache, {@link CacheStatus Cache-Status}, and 304 without a
 * body when {@code If-None-Match} names the current tag (weak comparison) or is {@code *} (RFC 9110 13.1.2; Spring
 * MVC's own check treats {@code *} as no match on GET). Under mode {@code none} there is no cache to describe: a plain
 * 200.
 */
@Component
public class CachedReads {

	/**
	 * The request attribute under which {@link DirectReadHandler} passes on a read that failed, so that the
	 * controller throws it instead of reading again.
	 */
	static final String FAILURE = CachedReads.class.getName() + ".FAILURE";

	/** A value served stale (stale-if-error): clients must not keep it. */
	private static final String STALE_CACHE_CONTROL = CacheControl.noCache().getHeaderValue();

	private final CachedJsonBodies bodies;

	private final Map<String, String> cacheControls;

	CachedReads(ObjectProvider<CachedJsonBodies> bodies, ApiProperties properties) {
		this.bodies = bodies.getIfAvailable();
		ApiProperties.Http http = properties.getHttp();
		this.cacheControls = Map.of("concert", cacheControl(http.getConcertMaxAge()), "concert-page",
				cacheControl(http.getConcertPageMaxAge()), "schedules", cacheControl(http.getSchedulesMaxAge()));
	}

	/**
	 * The lookup {@code read} gives, or, if {@link DirectReadHandler} already tried this request's read and it failed,
	 * that failure: thrown again, so that a failing read is not repeated (and counted twice by the loader's circuit
	 * breaker) and answers as it always did.
	 */
	public <T> Lookup<T> lookup(Supplier<Lookup<T>> read) {
		RequestAttributes request = RequestContextHolder.getRequestAttributes();
		if (request != null && request.getAttribute(FAILURE, RequestAttributes.SCOPE_REQUEST) instanceof RuntimeException failure) {
			request.removeAttribute(FAILURE, RequestAttributes.SCOPE_REQUEST);
			throw failure;
		}
		return read.get();
	}

	/**
	 * 200 with the value of {@code lookup} (present), described as a read of cache {@code cache}; 304 if
	 * {@code ifNoneMatch} (the request's field, or {@code null}) matches it.
	 */
	public <T> ResponseEntity<T> ok(String cache, Lookup<T> lookup, String ifNoneMatch) {
		T body = lookup.value().orElseThrow();
		if (this.bodies == null) {
			return ResponseEntity.ok(body);
		}
		String cacheControl = cacheControl(cache, lookup.stale());
		CachedJsonBodies.Body cached = this.bodies.of(body);
		boolean notModified = ifNoneMatch != null && matches(ifNoneMatch, cached.etag());
		return new CachedReadEntity<>(notModified ? null : body, notModified ? HttpStatus.NOT_MODIFIED : HttpStatus.OK,
				cached.json(), cached.etag(), cacheControl, CacheStatus.of(lookup));
	}

	/** The {@code Cache-Control} of a read of cache {@code cache}, or of any stale read. */
	String cacheControl(String cache, boolean stale) {
		if (stale) {
			return STALE_CACHE_CONTROL;
		}
		String cacheControl = this.cacheControls.get(cache);
		if (cacheControl == null) {
			throw new IllegalArgumentException("No Cache-Control for cache '" + cache + "'");
		}
		return cacheControl;
	}

	/** RFC 9110 13.1.2: {@code *}, or any listed tag equal to {@code tag} under weak comparison. */
	private static boolean matches(String ifNoneMatch, String tag) {
		ETag current = ETag.create(tag);
		for (ETag requested : ETag.parse(ifNoneMatch)) {
			if (requested.isWildcard() || requested.compare(current, false)) {
				return true;
			}
		}
		return false;
	}

	/** {@code max-age} in whole seconds; zero: store but revalidate every time ({@code no-cache}). */
	private static String cacheControl(Duration maxAge) {
		return (maxAge.getSeconds() > 0) ? CacheControl.maxAge(maxAge).getHeaderValue()
				: CacheControl.noCache().getHeaderValue();
	}

}
