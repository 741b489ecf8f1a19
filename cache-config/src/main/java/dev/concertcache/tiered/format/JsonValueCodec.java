package dev.concertcache.tiered.format;

import java.util.Optional;
import java.util.UUID;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Redis form of cached values: JSON in an envelope that carries the format version, as ADR 0012 lays it out.
 * {@code f}, the fresh-until time (ADR 0031), and {@code r}, when the load that wrote the value began on the Redis
 * server's clock (ADR 0039), come right after the version so that the lock script can read them without parsing
 * JSON. An entry without {@code f} is fresh for as long as Redis keeps it; one without {@code r} is not trusted while
 * the change feed is behind. {@code s} is the {@link ValueShape} of the value type: an entry of another shape (or of
 * none) is unreadable, never decoded into an object whose renamed or added properties read as {@code null}; the keys
 * carry the shape too, and this check guards what they cannot (a value written by other code).
 *
 * @param <V> the value type
 */
public final class JsonValueCodec<V> {

	/** The envelope format this code writes and reads; also the {@code v1} segment of every key. */
	public static final int FORMAT_VERSION = 1;

	public static final String TOMBSTONE_PREFIX = "{\"v\":" + FORMAT_VERSION + ",\"tombstone\":\"";

	/** How every entry written with a freshness starts; the digits of the fresh-until time follow. */
	public static final String FRESH_UNTIL_PREFIX = "{\"v\":" + FORMAT_VERSION + ",\"f\":";

	/** Freshness of an entry written without one: as long as Redis keeps it. */
	public static final long ALWAYS_FRESH = Long.MAX_VALUE;

	/** The database read time of an entry written without one: unknown, older than any. */
	public static final long UNKNOWN_READ = Long.MIN_VALUE;

	private final JsonMapper mapper;

	private final JavaType envelopeType;

	private final String shape;

	public JsonValueCodec(JsonMapper mapper, Class<V> valueType) {
		this.mapper = mapper;
		this.envelopeType = mapper.getTypeFactory().constructParametricType(Envelope.class, valueType);
		this.shape = ValueShape.fingerprint(mapper, valueType);
	}

	/** The fingerprint of the value type's JSON shape. */
	public String shape() {
		return this.shape;
	}

	/** The mapper used when the application does not provide one. */
	public static JsonMapper defaultMapper() {
		return JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
	}

	/**
	 * Writes {@code value}, fresh until {@code freshUntil} (epoch ms, this instance's clock), read from the database
	 * at {@code readAt} (epoch ms, the Redis server's clock; {@link #UNKNOWN_READ} writes none).
	 */
	public String encode(Optional<V> value, long freshUntil, long readAt) {
		String prefix = FRESH_UNTIL_PREFIX + freshUntil + ((readAt != UNKNOWN_READ) ? ",\"r\":" + readAt : "")
				+ ",\"s\":\"" + this.shape + "\"";
		if (value.isEmpty()) {
			return prefix + ",\"absent\":true}";
		}
		return prefix + ",\"d\":" + this.mapper.writeValueAsString(value.get()) + "}";
	}

	/**
	 * Reads a stored value.
	 * @throws UnreadableValueException if {@code raw} is no envelope of this format version
	 */
	public Stored<V> decode(String raw) {
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
		if (!this.shape.equals(envelope.s())) {
			throw new OtherShapeException(envelope.s(), this.shape);
		}
		long freshUntil = (envelope.f() != null) ? envelope.f() : ALWAYS_FRESH;
		long readAt = (envelope.r() != null) ? envelope.r() : UNKNOWN_READ;
		if (Boolean.TRUE.equals(envelope.absent())) {
			return new Stored<>(Optional.empty(), freshUntil, readAt);
		}
		if (envelope.d() == null) {
			throw new UnreadableValueException("Envelope without a value", null);
		}
		return new Stored<>(Optional.of(envelope.d()), freshUntil, readAt);
	}

	/**
	 * The fresh-until time an entry starts with, read without parsing its JSON (as the lock script reads it);
	 * {@code -1} if it does not start with one.
	 */
	public static long freshUntilPrefix(String raw) {
		if (!raw.startsWith(FRESH_UNTIL_PREFIX)) {
			return -1;
		}
		int start = FRESH_UNTIL_PREFIX.length();
		int end = start;
		while (end < raw.length() && end - start < 19 && Character.isDigit(raw.charAt(end))) {
			end++;
		}
		return (end > start && end < raw.length() && raw.charAt(end) == ',')
				? Long.parseLong(raw, start, end, 10) : -1;
	}

	public static boolean isTombstone(@Nullable String raw) {
		return raw != null && raw.startsWith(TOMBSTONE_PREFIX);
	}

	public static String newTombstone() {
		return TOMBSTONE_PREFIX + UUID.randomUUID() + "\"}";
	}

	/** The envelope as Jackson reads it. */
	record Envelope<V>(int v, @Nullable Long f, @Nullable Long r, @Nullable String s, @Nullable V d,
			@Nullable Boolean absent, @Nullable String tombstone) {
	}

	/**
	 * A value as Redis holds it.
	 * @param value the value, empty for an absent result
	 * @param freshUntil epoch milliseconds until which it is fresh ({@link #ALWAYS_FRESH} if it carries no time)
	 * @param readAt epoch milliseconds when the load that wrote it began ({@link #UNKNOWN_READ} if it carries none)
	 */
	public record Stored<V>(Optional<V> value, long freshUntil, long readAt) {

		public boolean isFreshAt(long millis) {
			return millis < this.freshUntil;
		}

	}

	/** A stored value this code cannot read; the cache treats it as a miss. */
	public static class UnreadableValueException extends RuntimeException {

		UnreadableValueException(String message, Throwable cause) {
			super(message, cause);
		}

	}

	/** A value written for another shape of the value type (or for none); a miss like any unreadable value. */
	public static final class OtherShapeException extends UnreadableValueException {

		OtherShapeException(String found, String expected) {
			super("Value of shape " + found + ", expected " + expected, null);
		}

	}

}
