package dev.concertcache.api.web;

import dev.concertcache.tiered.TieredCache.Lookup;

/**
 * A cached read that {@link DirectReadHandler} answers before Spring MVC: the controller's path template (the same
 * string, so that the {@code uri} tag of {@code http.server.requests} is the same), the cache whose
 * {@code Cache-Control} the answer carries, and the read itself. A template has at most one variable, a
 * non-negative {@code long} (an id); a paged route takes no variable and the query parameters {@code cursor} and
 * {@code size}.
 */
public final class DirectRoute {

	/** What {@link #match} returns for a path that is not this route's. */
	static final long NO_MATCH = -1;

	private final String template;

	private final String cache;

	private final String prefix;

	private final String suffix;

	private final boolean hasId;

	private final Paged paged;

	private final ById byId;

	private final int defaultSize;

	private final int maxSize;

	private DirectRoute(String template, String cache, Paged paged, int defaultSize, int maxSize, ById byId) {
		this.template = template;
		this.cache = cache;
		int open = template.indexOf('{');
		this.hasId = open >= 0;
		this.prefix = template.substring(0, this.hasId ? open : template.length());
		this.suffix = this.hasId ? template.substring(template.indexOf('}') + 1) : "";
		this.paged = paged;
		this.defaultSize = defaultSize;
		this.maxSize = maxSize;
		this.byId = byId;
	}

	/** A route with one id in its path, e.g. {@code /api/concerts/{id}}, and no query. */
	public static DirectRoute byId(String template, String cache, ById read) {
		if (template.indexOf('{') < 0 || template.indexOf('{') != template.lastIndexOf('{')) {
			throw new IllegalArgumentException("One variable: " + template);
		}
		return new DirectRoute(template, cache, null, 0, 0, read);
	}

	/** A route without variables, paged by the query parameters {@code cursor} and {@code size}. */
	public static DirectRoute paged(String path, String cache, int defaultSize, int maxSize, Paged read) {
		if (path.indexOf('{') >= 0) {
			throw new IllegalArgumentException("No variables: " + path);
		}
		return new DirectRoute(path, cache, read, defaultSize, maxSize, null);
	}

	String template() {
		return this.template;
	}

	String cache() {
		return this.cache;
	}

	boolean paged() {
		return this.paged != null;
	}

	int defaultSize() {
		return this.defaultSize;
	}

	int maxSize() {
		return this.maxSize;
	}

	/**
	 * The id in {@code path} (Jetty's decoded, normalized path) if it is this route's path, {@code 0} for a route
	 * without one, or {@link #NO_MATCH}. Only plain decimal ids without a leading zero match: any other spelling Spring
	 * MVC might still convert is left to it.
	 */
	long match(String path) {
		if (!this.hasId) {
			return path.equals(this.prefix) ? 0 : NO_MATCH;
		}
		int digits = path.length() - this.prefix.length() - this.suffix.length();
		if (digits < 1 || digits > 18 || !path.startsWith(this.prefix) || !path.endsWith(this.suffix)) {
			return NO_MATCH;
		}
		int from = this.prefix.length();
		if (path.charAt(from) == '0' && digits > 1) {
			return NO_MATCH;
		}
		long id = 0;
		for (int i = from; i < from + digits; i++) {
			int digit = path.charAt(i) - '0';
			if (digit < 0 || digit > 9) {
				return NO_MATCH;
			}
			id = id * 10 + digit;
		}
		return id;
	}

	/** The lookup of a matched request: {@code id} for a route by id, {@code cursor} (or null) and size if paged. */
	Lookup<?> read(long id, String cursor, int size) {
		return (this.paged != null) ? this.paged.read(cursor, size) : this.byId.read(id);
	}

	/** The read of a route by id; throws as the controller's read does (not found, database unavailable). */
	@FunctionalInterface
	public interface ById {

		Lookup<?> read(long id);

	}

	/** The read of a paged route; {@code cursor} is null on the first page. */
	@FunctionalInterface
	public interface Paged {

		Lookup<?> read(String cursor, int size);

	}

}
