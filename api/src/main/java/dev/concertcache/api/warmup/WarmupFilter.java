package dev.concertcache.api.warmup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

import dev.concertcache.api.web.DirectReadWarmup;
import dev.concertcache.tiered.TieredCacheWarmup;

/**
 * Runs the warm-up's own requests inside the cache warm-up, so that they never touch the real caches. They carry
 * a random token of this process in a header; other requests, and every request once the warm-up is over, pass
 * straight through (one volatile read). The same for the reads Jetty answers directly
 * ({@link DirectReadWarmup}).
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class WarmupFilter implements Filter, DirectReadWarmup {

	private final String token = newToken();

	private volatile TieredCacheWarmup warmup;

	@Override
	public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
			throws IOException, ServletException {
		TieredCacheWarmup current = this.warmup;
		if (current == null || !carriesToken(request)) {
			chain.doFilter(request, response);
			return;
		}
		try (TieredCacheWarmup.Scope scope = current.enter()) {
			chain.doFilter(request, response);
		}
	}

	@Override
	public TieredCacheWarmup.Scope enter(String presented) {
		TieredCacheWarmup current = this.warmup;
		return (current != null && matches(presented)) ? current.enter() : null;
	}

	String token() {
		return this.token;
	}

	void begin(TieredCacheWarmup warmup) {
		this.warmup = warmup;
	}

	void end() {
		this.warmup = null;
	}

	private boolean carriesToken(ServletRequest request) {
		return matches((request instanceof HttpServletRequest http) ? http.getHeader(HEADER) : null);
	}

	private boolean matches(String presented) {
		return presented != null && MessageDigest.isEqual(presented.getBytes(StandardCharsets.UTF_8),
				this.token.getBytes(StandardCharsets.UTF_8));
	}

	private static String newToken() {
		byte[] bytes = new byte[24];
		new SecureRandom().nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

}
