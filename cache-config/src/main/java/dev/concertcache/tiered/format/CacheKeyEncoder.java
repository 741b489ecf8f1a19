package dev.concertcache.tiered.format;

import java.lang.reflect.RecordComponent;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Turns a typed cache key into the string both tiers store it under.
 * <p>
 * Only types with one obvious, stable text form are accepted: {@link String}, the primitives and their boxes,
 * {@link UUID}, and records whose components are of those types. Record components are joined with
 * {@code ','}; each component escapes {@code '\'} and {@code ','} with a backslash and a {@code null} component
 * is written {@code \N}, so that distinct keys never share a string. A key that would read {@code "*"} (the
 * "every key" of invalidation messages) is written {@code \*}.
 *
 * @param <K> the key type
 */
public final class CacheKeyEncoder<K> {

	private static final Set<Class<?>> SCALARS = Set.of(String.class, Long.class, Integer.class, Short.class,
			Byte.class, Boolean.class, Character.class, Double.class, Float.class, UUID.class, long.class, int.class,
			short.class, byte.class, boolean.class, char.class, double.class, float.class);

	private final Class<K> type;

	private final List<RecordComponent> components;

	private CacheKeyEncoder(Class<K> type, List<RecordComponent> components) {
		this.type = type;
		this.components = components;
	}

	/**
	 * Returns the encoder of {@code type}.
	 * @throws IllegalArgumentException if keys of {@code type} have no stable text form
	 */
	public static <K> CacheKeyEncoder<K> of(String cacheName, Class<K> type) {
		if (SCALARS.contains(type)) {
			return new CacheKeyEncoder<>(type, null);
		}
		if (type.isRecord()) {
			List<RecordComponent> components = List.of(type.getRecordComponents());
			for (RecordComponent component : components) {
				if (!SCALARS.contains(component.getType())) {
					throw unsupported(cacheName, type,
							"component '" + component.getName() + "' is a " + component.getType().getName());
				}
				component.getAccessor().setAccessible(true);
			}
			return new CacheKeyEncoder<>(type, components);
		}
		throw unsupported(cacheName, type, "it is neither a String, a boxed primitive, a UUID nor a record of those");
	}

	public String encode(K key) {
		if (key == null) {
			throw new IllegalArgumentException("Cache keys must not be null");
		}
		if (!this.type.isInstance(key)) {
			throw new IllegalArgumentException("Key " + key + " is not a " + this.type.getName());
		}
		if (this.components == null) {
			String text = escape(String.valueOf(key));
			return "*".equals(text) ? "\\*" : text;
		}
		StringBuilder text = new StringBuilder();
		for (RecordComponent component : this.components) {
			if (component != this.components.get(0)) {
				text.append(',');
			}
			Object value = read(component, key);
			text.append((value != null) ? escape(String.valueOf(value)) : "\\N");
		}
		return "*".contentEquals(text) ? "\\*" : text.toString();
	}

	private static Object read(RecordComponent component, Object record) {
		try {
			return component.getAccessor().invoke(record);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("Cannot read " + component, ex);
		}
	}

	private static String escape(String text) {
		if (text.indexOf('\\') < 0 && text.indexOf(',') < 0) {
			return text;
		}
		return text.replace("\\", "\\\\").replace(",", "\\,");
	}

	private static IllegalArgumentException unsupported(String cacheName, Class<?> type, String reason) {
		return new IllegalArgumentException("Cache '" + cacheName + "' cannot use keys of type " + type.getName()
				+ ": " + reason + ". Keys must be a String, a boxed primitive, a UUID or a record of those, so that "
				+ "every instance and every version of the application builds the same Redis key.");
	}

}
