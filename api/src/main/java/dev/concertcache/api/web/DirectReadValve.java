package dev.concertcache.api.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import jakarta.servlet.ServletException;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.tomcat.util.buf.ByteChunk;
import org.apache.tomcat.util.buf.CharChunk;
import org.apache.tomcat.util.buf.MessageBytes;
import org.apache.tomcat.util.http.MimeHeaders;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

import dev.concertcache.api.web.DirectResponseHeaders.Value;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCacheWarmup;

/**
 * Answers a plain GET of a cached read ({@link DirectRoute}) in Tomcat's pipeline, before the servlet filters and
 * Spring MVC (ADR 0205): the route is matched on the request's bytes, the value looked up as the controller does,
 * and the cached JSON written with headers made once ({@link DirectResponseHeaders}). A cached hit then allocates
 * little beyond Tomcat's parsing of the request: no handler mapping, argument conversion, observation context,
 * request attributes or header encoders. It records {@code http.server.requests} with the tags Spring MVC's
 * observation gives the same answer.
 * <p>
 * Everything else goes on to the servlet, unchanged: another method, a request with {@code If-None-Match}, an
 * {@code Accept} other than none, {@code *}{@code /*} or {@code application/json}, a cookie or a commit position
 * (causal reads wait or read through in a servlet filter, ADR 0038), a query
 * this valve does not parse, a value that is absent. A read that fails (the database unavailable, a bad cursor)
 * is not repeated: its exception goes on with the request ({@link CachedReads#FAILURE}) and the controller throws
 * it, so its problem+json and metrics are Spring MVC's.
 */
final class DirectReadValve extends ValveBase {

	private static final String ACCEPT = HttpHeaders.ACCEPT;

	/** The header of a causal read (ADR 0038), which the causal-read filter acts on. */
	static final String COMMIT_POSITION = "Concert-Cache-Position";

	/** {@link CacheStatus#of}'s values as header bytes, made once. */
	private static final Map<String, Value> CACHE_STATUSES = Stream
		.of(CacheStatus.HIT_L1, CacheStatus.HIT_L2, CacheStatus.MISS, CacheStatus.STALE)
		.collect(Collectors.toUnmodifiableMap(Function.identity(), Value::of));

	private final Supplier<Routes> resolve;

	private final DirectResponseHeaders headers = DirectResponseHeaders.create();

	/** Resolved on the first request: the routes' beans need the application context, which starts after Tomcat. */
	private volatile Routes routes;

	DirectReadValve(Supplier<Routes> routes) {
		super(true);
		this.resolve = routes;
	}

	@Override
	public void invoke(Request request, Response response) throws IOException, ServletException {
		Routes routes = routes();
		org.apache.coyote.Request in = request.getCoyoteRequest();
		if (routes != null && in.method().equals("GET") && plain(in.getMimeHeaders())) {
			MessageBytes uri = in.decodedURI();
			if (uri.getType() == MessageBytes.T_CHARS) {
				CharChunk path = uri.getCharChunk();
				for (int i = 0; i < routes.routes.length; i++) {
					long id = routes.routes[i].match(path.getBuffer(), path.getStart(), path.getEnd());
					if (id != DirectRoute.NO_MATCH) {
						if (serveInScope(routes, i, id, request, response)) {
							return;
						}
						break;
					}
				}
			}
		}
		getNext().invoke(request, response);
	}

	/**
	 * Whether the request asks for nothing but the plain JSON answer: no conditional, no content negotiation, and
	 * no cookie or commit position, which a servlet filter acts on (causal reads, ADR 0038).
	 */
	private static boolean plain(MimeHeaders headers) {
		MessageBytes accept = headers.getValue(ACCEPT);
		return (accept == null || accept.equals(MediaType.ALL_VALUE)
				|| accept.equals(MediaType.APPLICATION_JSON_VALUE))
				&& headers.getValue(HttpHeaders.IF_NONE_MATCH) == null && headers.getValue(HttpHeaders.COOKIE) == null
				&& headers.getValue(COMMIT_POSITION) == null;
	}

	/** {@link #serve}, inside the cache warm-up for the warm-up's own requests; others carrying its header pass on. */
	private boolean serveInScope(Routes routes, int index, long id, Request request, Response response)
			throws IOException {
		MessageBytes warmup = request.getCoyoteRequest().getMimeHeaders().getValue(DirectReadWarmup.HEADER);
		if (warmup == null) {
			return serve(routes, index, id, request, response);
		}
		TieredCacheWarmup.Scope scope = (routes.warmup != null) ? routes.warmup.enter(warmup.toString()) : null;
		if (scope == null) {
			return false;
		}
		try (scope) {
			return serve(routes, index, id, request, response);
		}
	}

	/** Answers with route {@code index}'s value, or returns false to leave the request to the servlet. */
	private boolean serve(Routes routes, int index, long id, Request request, Response response)
			throws IOException {
		DirectRoute route = routes.routes[index];
		MessageBytes query = request.getCoyoteRequest().queryString();
		String cursor = null;
		int size = 0;
		if (route.paged()) {
			if (!query.isNull() && query.getType() != MessageBytes.T_BYTES) {
				return false;
			}
			ByteChunk bytes = query.isNull() ? null : query.getByteChunk();
			size = PageQuery.size(bytes, route.defaultSize(), route.maxSize());
			if (size < 0) {
				return false;
			}
			cursor = PageQuery.cursor(bytes);
		}
		else if (!query.isNull() && query.getLength() > 0) {
			return false;
		}
		long start = System.nanoTime();
		Lookup<?> lookup;
		try {
			lookup = route.read(id, cursor, size);
		}
		catch (RuntimeException ex) {
			request.setAttribute(CachedReads.FAILURE, ex);
			return false;
		}
		Object value = lookup.value().orElse(null);
		if (value == null) {
			return false;
		}
		CachedJsonBodies.Body body = routes.bodies.of(value);
		byte[] json = body.json();
		org.apache.coyote.Response out = response.getCoyoteResponse();
		out.setStatus(200);
		this.headers.write(out.getMimeHeaders(), body.etagHeader(),
				lookup.stale() ? routes.staleCacheControl : routes.freshCacheControls[index], status(lookup),
				json.length);
		out.setContentLength(json.length);
		response.getOutputStream().write(json);
		routes.timers[index].record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
		return true;
	}

	private Routes routes() {
		Routes routes = this.routes;
		if (routes == null) {
			synchronized (this) {
				routes = this.routes;
				if (routes == null) {
					routes = this.resolve.get();
					this.routes = routes;
				}
			}
		}
		return (routes.routes.length > 0) ? routes : null;
	}

	private static Value status(Lookup<?> lookup) {
		return CACHE_STATUSES.get(CacheStatus.of(lookup));
	}

	/** The routes with what their answers need: header values and timers made once, the cached bodies. */
	static final class Routes {

		private final DirectRoute[] routes;

		private final Value[] freshCacheControls;

		private final Value staleCacheControl;

		private final Timer[] timers;

		private final CachedJsonBodies bodies;

		private final DirectReadWarmup warmup;

		/**
		 * {@code metricName}'s timers have the tags Spring MVC's observation gives a 200 of the same template, so that
		 * both paths count in one series.
		 */
		Routes(List<DirectRoute> routes, CachedReads reads, CachedJsonBodies bodies, DirectReadWarmup warmup,
				MeterRegistry registry, String metricName) {
			this.routes = routes.toArray(DirectRoute[]::new);
			this.freshCacheControls = new Value[this.routes.length];
			this.timers = new Timer[this.routes.length];
			for (int i = 0; i < this.routes.length; i++) {
				this.freshCacheControls[i] = Value.of(reads.cacheControl(this.routes[i].cache(), false));
				this.timers[i] = Timer.builder(metricName)
					.tags(Tags.of("exception", "none", "method", "GET", "outcome", "SUCCESS", "status", "200", "uri",
							this.routes[i].template(), "error", "none"))
					.register(registry);
			}
			this.staleCacheControl = Value.of(reads.cacheControl(null, true));
			this.bodies = bodies;
			this.warmup = warmup;
		}

	}

	/**
	 * The query of a paged read: at most one {@code cursor} (base64url) and one {@code size} (1 to the route's
	 * maximum, decimal without a leading zero), nothing else; anything else is left to Spring MVC.
	 */
	static final class PageQuery {

		private static final byte[] CURSOR = "cursor=".getBytes(StandardCharsets.US_ASCII);

		private static final byte[] SIZE = "size=".getBytes(StandardCharsets.US_ASCII);

		private PageQuery() {
		}

		/** The size asked for, {@code defaultSize} if none, or -1 if the query is not one this valve parses. */
		static int size(ByteChunk query, int defaultSize, int maxSize) {
			if (query == null || query.getLength() == 0) {
				return defaultSize;
			}
			byte[] bytes = query.getBuffer();
			int size = -2;
			boolean cursor = false;
			int from = query.getStart();
			int end = query.getEnd();
			while (from <= end) {
				int to = indexOf(bytes, (byte) '&', from, end);
				if (startsWith(bytes, from, to, CURSOR) && !cursor) {
					cursor = true;
					if (!base64Url(bytes, from + CURSOR.length, to)) {
						return -1;
					}
				}
				else if (startsWith(bytes, from, to, SIZE) && size == -2) {
					size = decimal(bytes, from + SIZE.length, to, maxSize);
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
		static String cursor(ByteChunk query) {
			if (query == null) {
				return null;
			}
			byte[] bytes = query.getBuffer();
			int from = query.getStart();
			int end = query.getEnd();
			while (from <= end) {
				int to = indexOf(bytes, (byte) '&', from, end);
				if (startsWith(bytes, from, to, CURSOR)) {
					return new String(bytes, from + CURSOR.length, to - from - CURSOR.length,
							StandardCharsets.US_ASCII);
				}
				from = to + 1;
			}
			return null;
		}

		private static int indexOf(byte[] bytes, byte b, int from, int end) {
			for (int i = from; i < end; i++) {
				if (bytes[i] == b) {
					return i;
				}
			}
			return end;
		}

		private static boolean startsWith(byte[] bytes, int from, int to, byte[] prefix) {
			if (to - from < prefix.length) {
				return false;
			}
			for (int i = 0; i < prefix.length; i++) {
				if (bytes[from + i] != prefix[i]) {
					return false;
				}
			}
			return true;
		}

		private static boolean base64Url(byte[] bytes, int from, int to) {
			if (from >= to) {
				return false;
			}
			for (int i = from; i < to; i++) {
				byte b = bytes[i];
				if (!((b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-'
						|| b == '_')) {
					return false;
				}
			}
			return true;
		}

		/** The decimal in {@code [from, to)} if it is 1 to {@code max} without a leading zero, else -1. */
		private static int decimal(byte[] bytes, int from, int to, int max) {
			if (from >= to || to - from > 9 || bytes[from] == '0') {
				return -1;
			}
			int value = 0;
			for (int i = from; i < to; i++) {
				int digit = bytes[i] - '0';
				if (digit < 0 || digit > 9) {
					return -1;
				}
				value = value * 10 + digit;
			}
			return (value <= max) ? value : -1;
		}

	}

}
