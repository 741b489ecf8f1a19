package dev.concertcache.api.web;

import java.io.IOException;
import java.util.concurrent.atomic.LongAdder;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.HttpOutputMessage;
import org.springframework.http.MediaType;
import org.springframework.http.converter.AbstractHttpMessageConverter;
import org.springframework.stereotype.Component;

import tools.jackson.databind.json.JsonMapper;

/**
 * Writes {@link CachedJsonBody} responses from the JSON bytes of the very instance the in-process cache
 * returned, serialized once. A cache hit then costs no Jackson work: in the 1000-VU profile, JSON writing
 * was the largest single cost of a hit (ADR 0201). Keys are weak and compared by identity, so an entry
 * lives exactly as long as the cached value it was written from. Only with the in-process tier: without
 * it every read builds a new instance and there is nothing to reuse.
 */
@Component
@ConditionalOnProperty(prefix = "tiered-cache", name = "mode", havingValue = "tiered")
class CachedJsonBodyConverter extends AbstractHttpMessageConverter<Object> {

	/** Bounds the bytes held for values that are still referenced elsewhere. */
	private static final long MAXIMUM_BODIES = 50_000;

	private final Cache<Object, byte[]> bodies = Caffeine.newBuilder().weakKeys().maximumSize(MAXIMUM_BODIES).build();

	private final JsonMapper mapper;

	private final LongAdder serializations = new LongAdder();

	CachedJsonBodyConverter(JsonMapper mapper) {
		super(MediaType.APPLICATION_JSON);
		this.mapper = mapper;
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
		return (long) bytes(body).length;
	}

	@Override
	protected void writeInternal(Object body, HttpOutputMessage output) throws IOException {
		output.getBody().write(bytes(body));
	}

	/** How many bodies were serialized rather than reused. */
	long serializations() {
		return this.serializations.sum();
	}

	private byte[] bytes(Object body) {
		return this.bodies.get(body, (value) -> {
			this.serializations.increment();
			return this.mapper.writeValueAsBytes(value);
		});
	}

}
