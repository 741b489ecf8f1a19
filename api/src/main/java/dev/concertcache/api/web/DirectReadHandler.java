package dev.concertcache.api.web;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

import dev.concertcache.tiered.NotInMemoryException;
import dev.concertcache.tiered.TieredCache.Lookup;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.TieredCacheWarmup;

/**
 * Answers a plain GET of a cached read ({@link DirectRoute}) in Jetty, in front of the servlet context and Spring MVC
 * (ADR 0208): the route is matched on the request's path and query, the value looked up as the controller does, and
 * the cached JSON written with header fields encoded once. It records {@code http.server.requests} with the tags
 * Spring MVC's observation gives the same answer.
 * <p>
 * A non-blocking handler, so Jetty runs it on the selector thread that read the request, with no hand-off to another
 * thread: a value this instance holds in memory is answered there
 * ({@link TieredCacheManager#inMemoryOnly()}). Everything else is handed to Jetty's thread pool, where waiting is
 * allowed: a read that needs Redis or the database is made there and answered the same way; the rest goes on to the
 * servlet filters and Spring MVC, unchanged: another method, a request with {@code If-None-Match}, an {@code Accept}
 * other than none, {@code *}{@code /*} or {@code application/json}, a cookie or a commit position (causal reads
 * wait or read through in a servlet filter, ADR 0038), a query this handler does not parse, a value that is absent.
 * A read that fails (the database unavailable, a bad cursor) is not repeated: its exception goes on with the request
 * ({@link CachedReads#FAILURE}) and the controller throws it, so its problem+json and metrics are Spring MVC's.
 */
final class DirectReadHandler extends Handler.Wrapper {

	/** The header of a causal read (ADR 0038), which the causal-read filter acts on. */
	static final String COMMIT_POSITION = "Concert-Cache-Position";

	private static final HttpField JSON = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE,
			MediaType.APPLICATION_JSON_VALUE);

	/** {@link CacheStatus#of}'s values as fields, encoded once. */
	private static final Map<String, HttpField> CACHE_STATUSES = Stream
		.of(CacheStatus.HIT_L1, CacheStatus.HIT_L2, CacheStatus.MISS, CacheStatus.STALE)
		.collect(Collectors.toUnmodifiableMap(Function.identity(),
				(status) -> new PreEncodedHttpField(CacheStatus.HEADER, status)));

	private final Supplier<Routes> resolve;

	/** Resolved on the first request: the routes' beans need the application context, which starts after Jetty. */
	private volatile @Nullable Routes routes;

	DirectReadHandler(Supplier<Routes> routes) {
		this.resolve = routes;
	}

	/** Whatever the servlet context behind it is, this handler never blocks the thread that calls it. */
	@Override
	public InvocationType getInvocationType() {
		return InvocationType.NON_BLOCKING;
	}

	@Override
	public boolean handle(Request request, Response response, Callback callback) {
		Routes routes = routes();
		Read read = (routes != null) ? Read.of(routes, request) : null;
		if (read == null) {
			return dispatch(request, response, callback, () -> next(request, response, callback));
		}
		String warmupToken = request.getHeaders().get(DirectReadWarmup.HEADER);
		TieredCacheManager.InMemoryOnly inMemory = (warmupToken == null) ? routes.caches.inMemoryOnly() : null;
		if (inMemory == null) {
			return dispatch(request, response, callback,
					() -> serveOrPass(routes, read, warmupToken, request, response, callback));
		}
		try (inMemory) {
			if (readAndAnswer(routes, read, request, response, callback)) {
				return true;
			}
		}
		catch (NotInMemoryException ex) {
			return dispatch(request, response, callback,
					() -> serveOrPass(routes, read, null, request, response, callback));
		}
		return dispatch(request, response, callback, () -> next(request, response, callback));
	}

	/**
	 * On a pool thread: reads as the controller does, waiting for Redis or the database if need be (inside the cache
	 * warm-up for the warm-up's own requests), and answers, or leaves the request to the servlet.
	 */
	private void serveOrPass(Routes routes, Read read, @Nullable String warmupToken, Request request,
			Response response, Callback callback) throws Exception {
		TieredCacheWarmup.Scope scope = null;
		if (warmupToken != null) {
			scope = (routes.warmup != null) ? routes.warmup.enter(warmupToken) : null;
			if (scope == null) {
				next(request, response, callback);
				return;
			}
		}
		boolean answered;
		try {
			answered = readAndAnswer(routes, read, request, response, callback);
		}
		finally {
			if (scope != null) {
				scope.close();
			}
		}
		if (!answered) {
			next(request, response, callback);
		}
	}

	/**
	 * Reads as the controller does and answers; false to leave the request to the servlet, with a failed read's
	 * exception ({@link CachedReads#FAILURE}). A {@link NotInMemoryException} goes to the caller.
	 */
	private static boolean readAndAnswer(Routes routes, Read read, Request request, Response response,
			Callback callback) {
		long start = System.nanoTime();
		Lookup<?> lookup;
		try {
			lookup = read.route.read(read.id, read.cursor, read.size);
		}
		catch (NotInMemoryException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			request.setAttribute(CachedReads.FAILURE, ex);
			return false;
		}
		return answer(routes, read, lookup, start, response, callback);
	}

	/** Writes {@code lookup}'s value as the response, or returns false (no value) to leave it to the servlet. */
	private static boolean answer(Routes routes, Read read, Lookup<?> lookup, long start, Response response,
			Callback callback) {
		Object value = lookup.value().orElse(null);
		if (value == null) {
			return false;
		}
		CachedJsonBodies.Body body = routes.bodies.of(value);
		byte[] json = body.json();
		response.setStatus(HttpStatus.OK_200);
		HttpFields.Mutable fields = response.getHeaders();
		fields.add(body.etagField());
		fields.add(lookup.stale() ? routes.staleCacheControl : routes.freshCacheControls[read.index]);
		fields.add(CACHE_STATUSES.get(CacheStatus.of(lookup)));
		fields.add(JSON);
		// One last write of the whole body: Jetty writes its Content-Length.
		response.write(true, ByteBuffer.wrap(json), callback);
		routes.timers[read.index].record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
		return true;
	}

	/** The servlet context and Spring MVC, on a pool thread. */
	private void next(Request request, Response response, Callback callback) throws Exception {
		Handler next = getHandler();
		if (next == null || !next.handle(request, response, callback)) {
			Response.writeError(request, response, callback, HttpStatus.NOT_FOUND_404);
		}
	}

	/** Runs {@code task} on Jetty's thread pool; a failure it throws fails the request as Jetty would. */
	private static boolean dispatch(Request request, Response response, Callback callback, PoolTask task) {
		request.getContext().execute(() -> {
			try {
				task.run();
			}
			catch (Throwable ex) {
				Response.writeError(request, response, callback, ex);
			}
		});
		return true;
	}

	private @Nullable Routes routes() {
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

	@FunctionalInterface
	private interface PoolTask {

		void run() throws Exception;

	}

	/**
	 * A request this handler may answer: route {@code index} with its id, or its cursor (null on the first page) and
	 * size.
	 */
	private record Read(int index, DirectRoute route, long id, @Nullable String cursor, int size) {

		/** The read {@code request} asks for, or null if it is not a plain GET of a route this handler parses. */
		static @Nullable Read of(Routes routes, Request request) {
			if (!HttpMethod.GET.is(request.getMethod()) || !plain(request.getHeaders())) {
				return null;
			}
			HttpURI uri = request.getHttpURI();
			String path = uri.getCanonicalPath();
			if (path == null) {
				return null;
			}
			for (int i = 0; i < routes.routes.length; i++) {
				DirectRoute route = routes.routes[i];
				long id = route.match(path);
				if (id != DirectRoute.NO_MATCH) {
					return of(i, route, id, uri.getQuery());
				}
			}
			return null;
		}

		private static @Nullable Read of(int index, DirectRoute route, long id, @Nullable String query) {
			if (!route.paged()) {
				return (query == null || query.isEmpty()) ? new Read(index, route, id, null, 0) : null;
			}
			int size = PageQuery.size(query, route.defaultSize(), route.maxSize());
			return (size > 0) ? new Read(index, route, id, PageQuery.cursor(query), size) : null;
		}

		/**
		 * Whether the request asks for nothing but the plain JSON answer: no conditional, no content negotiation,
		 * and no cookie or commit position, which a servlet filter acts on (causal reads, ADR 0038).
		 */
		private static boolean plain(HttpFields headers) {
			String accept = headers.get(HttpHeader.ACCEPT);
			return (accept == null || accept.equals(MediaType.ALL_VALUE)
					|| accept.equals(MediaType.APPLICATION_JSON_VALUE))
					&& !headers.contains(HttpHeader.IF_NONE_MATCH) && !headers.contains(HttpHeader.COOKIE)
					&& !headers.contains(COMMIT_POSITION);
		}

	}

	/** The routes with what their answers need: header fields and timers made once, the cached bodies. */
	static final class Routes {

		private final DirectRoute[] routes;

		private final HttpField[] freshCacheControls;

		private final HttpField staleCacheControl;

		private final Timer[] timers;

		private final CachedJsonBodies bodies;

		private final TieredCacheManager caches;

		private final @Nullable DirectReadWarmup warmup;

		/**
		 * {@code metricName}'s timers have the tags Spring MVC's observation gives a 200 of the same template, so that
		 * both paths count in one series.
		 */
		Routes(List<DirectRoute> routes, CachedReads reads, CachedJsonBodies bodies, TieredCacheManager caches,
				@Nullable DirectReadWarmup warmup, MeterRegistry registry, String metricName) {
			this.routes = routes.toArray(DirectRoute[]::new);
			this.freshCacheControls = new HttpField[this.routes.length];
			this.timers = new Timer[this.routes.length];
			for (int i = 0; i < this.routes.length; i++) {
				this.freshCacheControls[i] = cacheControl(reads.cacheControl(this.routes[i].cache(), false));
				this.timers[i] = Timer.builder(metricName)
					.tags(Tags.of("exception", "none", "method", "GET", "outcome", "SUCCESS", "status", "200", "uri",
							this.routes[i].template(), "error", "none"))
					.register(registry);
			}
			this.staleCacheControl = cacheControl(reads.cacheControl(null, true));
			this.bodies = bodies;
			this.caches = caches;
			this.warmup = warmup;
		}

		private static HttpField cacheControl(String value) {
			return new PreEncodedHttpField(HttpHeaders.CACHE_CONTROL, value);
		}

	}

}
