package dev.concertcache.api.web;

import java.io.IOException;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.HttpOutputMessage;
import org.springframework.http.MediaType;
import org.springframework.http.converter.AbstractHttpMessageConverter;
import org.springframework.stereotype.Component;

/**
 * Writes {@link CachedJsonBody} responses from the JSON bytes of the very instance the cache returned, serialized
 * once ({@link CachedJsonBodies}). A cache hit then costs no Jackson work: in the 1000-VU profile, JSON writing was
 * the largest single cost of a hit (ADR 0201). The bytes are those the response's entity tag was computed from.
 */
@Component
@ConditionalOnExpression(CachedJsonBodies.CACHE_ON)
class CachedJsonBodyConverter extends AbstractHttpMessageConverter<Object> {

	private final CachedJsonBodies bodies;

	CachedJsonBodyConverter(CachedJsonBodies bodies) {
		super(MediaType.APPLICATION_JSON);
		this.bodies = bodies;
	}

	@Override
	protected boolean supports(Class<?> type) {
		return type.isAnnotationPresent(CachedJsonBody.class);
	}

	@Override
	protected boolean canRead(MediaType mediaType) {
		return false;
	}

	@Override
	protected Object readInternal(Class<?> type, HttpInputMessage input) {
		throw new UnsupportedOperationException("Response bodies only");
	}

	@Override
	protected Long getContentLength(Object body, MediaType contentType) {
		return (long) this.bodies.of(body).json().length;
	}

	@Override
	protected void writeInternal(Object body, HttpOutputMessage output) throws IOException {
		output.getBody().write(this.bodies.of(body).json());
	}

	/** How many bodies were serialized rather than reused. */
	long serializations() {
		return this.bodies.serializations();
	}

}
