package dev.concertcache.api.web;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.concurrent.atomic.LongAdder;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.stereotype.Component;

import tools.jackson.databind.json.JsonMapper;

/**
 * The JSON bytes of {@link CachedJsonBody} values and their strong entity tag, made once per value instance. Under
 * the {@code tiered} mode a cache hit returns the very instance L1 holds, so a hit costs neither Jackson nor a hash
 * (ADR 0201, ADR 0034); under {@code redis} every read decodes a new instance and pays both once, as an uncached
 * endpoint pays serialization. Keys are weak and compared by identity, so an entry lives exactly as long as the value it was
 * made from. Not under mode {@code none}: nothing is cached, so nothing is reused.
 */
@Component
@ConditionalOnExpression(CachedJsonBodies.CACHE_ON)
class CachedJsonBodies {

	/** Whether {@code tiered-cache.mode} caches at all (tiered or redis). */
	static final String CACHE_ON = "!'${tiered-cache.mode:none}'.equalsIgnoreCase('none')";

	/** Bounds the bytes held for values that are still referenced elsewhere. */
	private static final long MAXIMUM_BODIES = 50_000;

	/** 128 bits of SHA-256: collisions between two versions of one resource are out of reach. */
	private static final int TAG_BYTES = 16;

	private final Cache<Object, Body> bodies = Caffeine.newBuilder().weakKeys().maximumSize(MAXIMUM_BODIES).build();

	private final JsonMapper mapper;

	private final LongAdder serializations = new LongAdder();

	CachedJsonBodies(JsonMapper mapper) {
		this.mapper = mapper;
	}

	/** The bytes and tag of {@code value}, made on first use of this instance. */
	Body of(Object value) {
		return this.bodies.get(value, this::serialize);
	}

	/** How many bodies were serialized rather than reused. */
	long serializations() {
		return this.serializations.sum();
	}

	private Body serialize(Object value) {
		this.serializations.increment();
		byte[] json = this.mapper.writeValueAsBytes(value);
		String etag = entityTag(json);
		return new Body(json, etag, new PreEncodedHttpField(HttpHeader.ETAG, etag));
	}

	private static String entityTag(byte[] json) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(json);
			return "\"" + Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, TAG_BYTES))
					+ "\"";
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every JVM has SHA-256", ex);
		}
	}

	/**
	 * A value's JSON and its strong entity tag (quoted): the same bytes always give the same tag, on every instance;
	 * the tag also as the header field {@link DirectReadHandler} writes, encoded once.
	 */
	record Body(byte[] json, String etag, HttpField etagField) {
	}

}
