package dev.concertcache.tiered.format;

import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.BeanProperty;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.jsonFormatVisitors.JsonArrayFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonBooleanFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonFormatVisitorWrapper;
import tools.jackson.databind.jsonFormatVisitors.JsonIntegerFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonMapFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonNumberFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonObjectFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonStringFormatVisitor;

/**
 * The JSON shape of a value type as the mapper writes it (property names, recursively, and the JSON kind of each
 * leaf), and a short fingerprint of it (ADR 0012). Two versions of the application share a cached value only if
 * their fingerprints are equal: a renamed, added, removed or retyped property gives another fingerprint, so a
 * value is never decoded into an object with a property silently {@code null}. Computed once per cache.
 */
public final class ValueShape {

	private ValueShape() {
	}

	/** Eight hex digits of the SHA-256 of {@link #describe}. */
	public static String fingerprint(JsonMapper mapper, Class<?> type) {
		return HexFormat.of().formatHex(StoredDigest.sha256(describe(mapper, type)), 0, 4);
	}

	/** A canonical text of the JSON shape, e.g. {@code {id:integer,name:string,tags:[string]}}. */
	public static String describe(JsonMapper mapper, Class<?> type) {
		return describe(mapper, mapper.constructType(type), new HashSet<>());
	}

	private static String describe(JsonMapper mapper, JavaType type, Set<JavaType> enclosing) {
		if (!enclosing.add(type)) {
			// A type that contains itself: name it rather than recurse forever.
			return "@" + type.toCanonical();
		}
		try {
			Describer describer = new Describer(mapper, enclosing);
			mapper.acceptJsonFormatVisitor(type, describer);
			return describer.text(type);
		}
		finally {
			enclosing.remove(type);
		}
	}

	/** Records the one format the serializer of a type announces. */
	private static final class Describer extends JsonFormatVisitorWrapper.Base {

		private final JsonMapper mapper;

		private final Set<JavaType> enclosing;

		private @Nullable String kind;

		/** Property name to shape, sorted: the order of properties does not matter to a reader. */
		private @Nullable Map<String, String> properties;

		private @Nullable JavaType items;

		Describer(JsonMapper mapper, Set<JavaType> enclosing) {
			this.mapper = mapper;
			this.enclosing = enclosing;
		}

		String text(JavaType type) {
			if (this.properties != null) {
				StringBuilder text = new StringBuilder("{");
				this.properties.forEach((name, shape) -> {
					text.append((text.length() > 1) ? "," : "").append(name).append(':').append(shape);
				});
				return text.append('}').toString();
			}
			if (this.items != null) {
				return this.kind + describe(this.mapper, this.items, this.enclosing) + ("[".equals(this.kind) ? "]" : ">");
			}
			return (this.kind != null) ? this.kind : "any:" + type.toCanonical();
		}

		@Override
		public @Nullable JsonObjectFormatVisitor expectObjectFormat(JavaType type) {
			this.properties = new TreeMap<>();
			return new JsonObjectFormatVisitor.Base(getContext()) {

				@Override
				public void property(BeanProperty property) {
					add(property);
				}

				@Override
				public void optionalProperty(BeanProperty property) {
					add(property);
				}

				private void add(BeanProperty property) {
					Describer.this.properties.put(property.getName(),
							describe(Describer.this.mapper, property.getType(), Describer.this.enclosing));
				}

			};
		}

		@Override
		public @Nullable JsonArrayFormatVisitor expectArrayFormat(JavaType type) {
			this.items = type.getContentType();
			this.kind = (this.items != null) ? "[" : "array";
			return null;
		}

		@Override
		public @Nullable JsonMapFormatVisitor expectMapFormat(JavaType type) {
			this.items = type.getContentType();
			this.kind = (this.items != null) ? "map<" : "map";
			return null;
		}

		@Override
		public @Nullable JsonStringFormatVisitor expectStringFormat(JavaType type) {
			this.kind = "string";
			return null;
		}

		@Override
		public @Nullable JsonIntegerFormatVisitor expectIntegerFormat(JavaType type) {
			this.kind = "integer";
			return null;
		}

		@Override
		public @Nullable JsonNumberFormatVisitor expectNumberFormat(JavaType type) {
			this.kind = "number";
			return null;
		}

		@Override
		public @Nullable JsonBooleanFormatVisitor expectBooleanFormat(JavaType type) {
			this.kind = "boolean";
			return null;
		}

	}

}
