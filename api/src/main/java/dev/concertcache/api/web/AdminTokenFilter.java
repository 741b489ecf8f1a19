package dev.concertcache.api.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

import dev.concertcache.api.ApiProperties;

/**
 * Closes every write under a path prefix to callers without the admin bearer token: {@code /api/} on the public
 * port, and the actuator's base path on the management port ({@link ManagementWriteSecurity}), where a write
 * empties caches or changes log levels. A single static token needs no user store, sessions or CSRF, so Spring
 * Security would add weight and no protection here (ADR 0004).
 */
@Component
class AdminTokenFilter extends OncePerRequestFilter {

	private static final Log logger = LogFactory.getLog(AdminTokenFilter.class);

	private static final String BEARER = "Bearer ";

	private final byte[] token;

	private final String protectedPrefix;

	@Autowired
	AdminTokenFilter(ApiProperties properties) {
		this(properties, "/api/");
	}

	AdminTokenFilter(ApiProperties properties, String protectedPrefix) {
		this.protectedPrefix = protectedPrefix;
		String configured = properties.getAdminToken();
		this.token = (configured != null && !configured.isBlank()) ? configured.getBytes(StandardCharsets.UTF_8)
				: null;
		if (this.token == null) {
			logger.warn("concert-cache.admin-token (CONCERT_CACHE_ADMIN_TOKEN) is not set: every write under "
					+ protectedPrefix + " is refused");
		}
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		String method = request.getMethod();
		return !request.getRequestURI().startsWith(this.protectedPrefix) || HttpMethod.GET.matches(method)
				|| HttpMethod.HEAD.matches(method) || HttpMethod.OPTIONS.matches(method);
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (authorized(request.getHeader(HttpHeaders.AUTHORIZATION))) {
			chain.doFilter(request, response);
			return;
		}
		response.setStatus(HttpStatus.UNAUTHORIZED.value());
		response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"concert-cache\"");
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		// JSON is UTF-8 (RFC 8259); the servlet default would be ISO-8859-1.
		response.setCharacterEncoding(StandardCharsets.UTF_8.name());
		response.getWriter()
			.write("{\"type\":\"about:blank\",\"title\":\"Unauthorized\",\"status\":401,"
					+ "\"detail\":\"Writes need the header Authorization: Bearer <admin token>\",\"instance\":\""
					+ request.getRequestURI().replace("\"", "") + "\"}");
	}

	private boolean authorized(String header) {
		if (this.token == null || header == null || !header.startsWith(BEARER)) {
			return false;
		}
		// Constant-time comparison, so response timing does not reveal the token byte by byte.
		return MessageDigest.isEqual(this.token, header.substring(BEARER.length()).getBytes(StandardCharsets.UTF_8));
	}

}
