package dev.concertcache.api.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/**
 * A cached read's response ({@link CachedReads}) that can write itself to the servlet response: status, the three
 * caching headers and the cached JSON bytes, without the per-request header map, content negotiation and message
 * converter lookup of Spring MVC's {@code ResponseEntity} handling (ADR 0034, ADR 0201). {@link #getHeaders()}
 * still gives the same headers to anything that reads them, built on first use.
 */
final class CachedReadEntity<T> extends ResponseEntity<T> {

	private static final String JSON = MediaType.APPLICATION_JSON_VALUE;

	private final byte[] json;

	private final String etag;

	private final String cacheControl;

	private final String cacheStatus;

	private HttpHeaders headers;

	CachedReadEntity(T body, HttpStatus status, byte[] json, String etag, String cacheControl, String cacheStatus) {
		super(body, status);
		this.json = json;
		this.etag = etag;
		this.cacheControl = cacheControl;
		this.cacheStatus = cacheStatus;
	}

	@Override
	public HttpHeaders getHeaders() {
		if (this.headers == null) {
			HttpHeaders headers = new HttpHeaders();
			headers.setETag(this.etag);
			headers.set(HttpHeaders.CACHE_CONTROL, this.cacheControl);
			headers.set(CacheStatus.HEADER, this.cacheStatus);
			this.headers = HttpHeaders.readOnlyHttpHeaders(headers);
		}
		return this.headers;
	}

	/** Writes what Spring MVC would write for this entity with the JSON converter: the same status, headers, bytes. */
	void writeTo(HttpServletResponse response) throws IOException {
		response.setStatus(getStatusCode().value());
		response.setHeader(HttpHeaders.ETAG, this.etag);
		response.setHeader(HttpHeaders.CACHE_CONTROL, this.cacheControl);
		response.setHeader(CacheStatus.HEADER, this.cacheStatus);
		if (hasBody()) {
			response.setContentType(JSON);
			response.setContentLength(this.json.length);
			response.getOutputStream().write(this.json);
		}
		response.flushBuffer();
	}

}
