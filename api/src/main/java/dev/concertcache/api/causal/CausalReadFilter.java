package dev.concertcache.api.causal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Predicate;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseCookie;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;

import dev.concertcache.api.capture.CommitPositions;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * Causal reads (ADR 0038). A successful write under {@code /api/} answers with the binary-log position after its
 * commit, in the {@value #POSITION} header and cookie. A read that carries one (header first, else cookie) waits
 * until this instance has heard the change feed confirm a position that covers it, at most {@code maxWait}; then
 * both tiers hold the write, and the read is served as any other. Past the wait it reads from the database, neither
 * tier consulted: a client never sees its own write undone, whichever instance it reads through.
 */
class CausalReadFilter extends OncePerRequestFilter {

	/** The header and cookie that carry a commit position. */
	static final String POSITION = "Concert-Cache-Position";

	private static final Log logger = LogFactory.getLog(CausalReadFilter.class);

	private final CommitPositions positions;

	private final TieredCacheManager caches;

	private final Duration maxWait;

	private final Duration cookieMaxAge;

	private final Counter caughtUp;

	private final Counter readThrough;

	/**
	 * @param maxWait how long a read waits for its position
	 * @param cookieMaxAge how long a client keeps the position cookie: past it every instance has heard the write
	 */
	CausalReadFilter(CommitPositions positions, TieredCacheManager caches, Duration maxWait, Duration cookieMaxAge,
			MeterRegistry meters) {
		this.positions = positions;
		this.caches = caches;
		this.maxWait = maxWait;
		this.cookieMaxAge = cookieMaxAge;
		this.caughtUp = reads(meters, "caught-up");
		this.readThrough = reads(meters, "database");
	}

	private static Counter reads(MeterRegistry meters, String outcome) {
		return Counter.builder("concert.cache.causal.reads")
			.description("Reads that carried a commit position, by where they were served from")
			.tag("served", outcome)
			.register(meters);
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return !request.getRequestURI().startsWith("/api/") || HttpMethod.OPTIONS.matches(request.getMethod());
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (HttpMethod.GET.matches(request.getMethod()) || HttpMethod.HEAD.matches(request.getMethod())) {
			read(request, response, chain);
		}
		else {
			write(request, response, chain);
		}
	}

	private void read(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String token = position(request);
		if (token == null) {
			chain.doFilter(request, response);
			return;
		}
		Predicate<String> covers;
		try {
			covers = this.positions.covering(token);
		}
		catch (IllegalArgumentException ex) {
			badPosition(request, response);
			return;
		}
		if (awaitChangeFeed(covers)) {
			this.caughtUp.increment();
			chain.doFilter(request, response);
			return;
		}
		this.readThrough.increment();
		try (TieredCacheManager.ReadThrough scope = this.caches.readThrough()) {
			chain.doFilter(request, response);
		}
	}

	private boolean awaitChangeFeed(Predicate<String> covers) {
		try {
			return this.caches.awaitChangeFeed(covers, this.maxWait);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/** Runs the write, then, if it succeeded, adds the position after it; the body is held until then. */
	private void write(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		ContentCachingResponseWrapper held = new ContentCachingResponseWrapper(response);
		try {
			chain.doFilter(request, held);
			if (HttpStatus.valueOf(held.getStatus()).is2xxSuccessful()) {
				addPosition(held);
			}
		}
		finally {
			held.copyBodyToResponse();
		}
	}

	private void addPosition(HttpServletResponse response) {
		String token;
		try {
			token = this.positions.now();
		}
		catch (SQLException ex) {
			// The write committed; without a position its client reads as any other, fresh within max-lag.
			logger.debug("Causal reads: cannot read the commit position", ex);
			return;
		}
		response.setHeader(POSITION, token);
		response.addHeader(HttpHeaders.SET_COOKIE, ResponseCookie.from(POSITION, token)
			.path("/api/")
			.maxAge(this.cookieMaxAge)
			.httpOnly(true)
			.sameSite("Lax")
			.build()
			.toString());
	}

	private static @Nullable String position(HttpServletRequest request) {
		String header = request.getHeader(POSITION);
		if (header != null) {
			return header;
		}
		if (request.getHeader(HttpHeaders.COOKIE) == null) {
			return null;
		}
		Cookie[] cookies = request.getCookies();
		if (cookies != null) {
			for (Cookie cookie : cookies) {
				if (POSITION.equals(cookie.getName())) {
					return cookie.getValue();
				}
			}
		}
		return null;
	}

	private static void badPosition(HttpServletRequest request, HttpServletResponse response) throws IOException {
		response.setStatus(HttpStatus.BAD_REQUEST.value());
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setCharacterEncoding(StandardCharsets.UTF_8.name());
		response.getWriter()
			.write("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":\"" + POSITION
					+ " (header or cookie) is not a commit position this service issued\",\"instance\":\""
					+ request.getRequestURI().replace("\"", "") + "\"}");
	}

}
