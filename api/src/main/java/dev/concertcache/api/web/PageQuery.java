package dev.concertcache.api.web;

import org.jspecify.annotations.Nullable;

/**
 * The query of a paged read: at most one {@code cursor} (base64url) and one {@code size} (1 to the route's
 * maximum, decimal without a leading zero), nothing else; anything else is left to Spring MVC.
 */
final class PageQuery {

	private static final String CURSOR = "cursor=";

	private static final String SIZE = "size=";

	private PageQuery() {
	}

	/**
	 * The size asked for, {@code defaultSize} if none, or -1 if the query is not one {@link DirectReadHandler}
	 * parses.
	 */
	static int size(@Nullable String query, int defaultSize, int maxSize) {
		if (query == null || query.isEmpty()) {
			return defaultSize;
		}
		int size = -2;
		boolean cursor = false;
		int from = 0;
		int end = query.length();
		while (from <= end) {
			int to = indexOfAmpersand(query, from);
			if (query.startsWith(CURSOR, from) && to - from >= CURSOR.length() && !cursor) {
				cursor = true;
				if (!base64Url(query, from + CURSOR.length(), to)) {
					return -1;
				}
			}
			else if (query.startsWith(SIZE, from) && to - from >= SIZE.length() && size == -2) {
				size = decimal(query, from + SIZE.length(), to, maxSize);
				if (size < 1) {
					return -1;
				}
			}
			else {
				return -1;
			}
			from = to + 1;
		}
		return (size == -2) ? defaultSize : size;
	}

	/** The cursor of a query {@link #size} accepted, or null. */
	static @Nullable String cursor(@Nullable String query) {
		if (query == null) {
			return null;
		}
		int from = 0;
		int end = query.length();
		while (from <= end) {
			int to = indexOfAmpersand(query, from);
			if (query.startsWith(CURSOR, from)) {
				return query.substring(from + CURSOR.length(), to);
			}
			from = to + 1;
		}
		return null;
	}

	private static int indexOfAmpersand(String query, int from) {
		int to = query.indexOf('&', from);
		return (to < 0) ? query.length() : to;
	}

	private static boolean base64Url(String query, int from, int to) {
		if (from >= to) {
			return false;
		}
		for (int i = from; i < to; i++) {
			char c = query.charAt(i);
			if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
					|| c == '_')) {
				return false;
			}
		}
		return true;
	}

	/** The decimal in {@code [from, to)} if it is 1 to {@code max} without a leading zero, else -1. */
	private static int decimal(String query, int from, int to, int max) {
		if (from >= to || to - from > 9 || query.charAt(from) == '0') {
			return -1;
		}
		int value = 0;
		for (int i = from; i < to; i++) {
			int digit = query.charAt(i) - '0';
			if (digit < 0 || digit > 9) {
				return -1;
			}
			value = value * 10 + digit;
		}
		return (value <= max) ? value : -1;
	}

}
