package dev.concertcache.tiered;

import java.util.Optional;
import java.util.UUID;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Redis form of cached values: JSON in an envelope that carries the format version (ADR 0012).
 * <ul>
 * <li>a value: {@code {"v":1,"d":<the value as JSON>}}</li>
 * <li>an absent result: {@code {"v":1,"absent":true}}</li>
 * <li>an eviction's tombstone: {@code {"v":1,"tombstone":"<random id>"}}, read as a miss</li>
 * </ul>
 * Unknown properties are ignored and missing ones read as {@code null}, so additive changes of the value type
 * stay readable across a rolling deploy in both directions.
 *
 * @param <V> the value type
 */
final class JsonValueCodec<V> {

	/** The envelope format this code writes and reads; also the {@code v1} segment of every key. */
	static final int FORMAT_VERSION = 1;

	static final String TOMBSTONE_PREFIX = "{\"v\":" + FORMAT_VERSION + ",\"tombstone\":\"";

	static final String ABSENT = "{\"v\":" + FORMAT_VERSION + ",\"absent\":true}";

	private static final String VALUE_PREFIX = "{\"v\":" + FORMAT_VERSION + ",\"d\":";

	private final JsonMapper mapper;

	private final JavaType envelopeType;

	JsonValueCodec(JsonMapper mapper, Class<V> valueType) {
		this.mapper = mapper;
		this.envelopeType = mapper.getTypeFactory().constructParametricType(Envelope.class, valueType);
	}

	/** The mapper used when the application does not provide one. */
	static JsonMapper defaultMapper() {
		return JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
	}

	String encode(Optional<V> value) {
		if (value.isEmpty()) {
			return ABSENT;
		}
		return VALUE_PREFIX + this.mapper.writeValueAsString(value.get()) + "}";
	}

	/**
	 * Reads a stored value.
	 * @throws UnreadableValueException if {@code raw} is no envelope of this format version
	 */
	Optional<V> decode(String raw) {
		Envelope<V> envelope;
		try {
			envelope = this.mapper.readValue(raw, this.envelopeType);
		}
		catch (JacksonException ex) {
			throw new UnreadableValueException("Not a cached value: " + ex.getOriginalMessage(), ex);
		}
		if (envelope.v() != FORMAT_VERSION || envelope.tombstone() != null) {
			throw new UnreadableValueException("Unsupported envelope (format " + envelope.v() + ")", null);
		}
		if (Boolean.TRUE.equals(envelope.absent())) {
			return Optional.empty();
		}
		if (envelope.d() == null) {
			throw new UnreadableValueException("Envelope without a value", null);
		}
		return Optional.of(envelope.d());
	}

	static boolean isTombstone(String raw) {
		return raw != null && raw.startsWith(TOMBSTONE_PREFIX);
	}

	static String newTombstone() {
		return TOMBSTONE_PREFIX + UUID.randomUUID() + "\"}";
	}

	/** The envelope as Jackson reads it. */
	record Envelope<V>(int v, V d, Boolean absent, String tombstone) {
	}

	/** A stored value this code cannot read; the cache treats it as a miss. */
	static final class UnreadableValueException extends RuntimeException {

		UnreadableValueException(String message, Throwable cause) {
			super(message, cause);
		}

	}

}
