package dev.concertcache.api.web;

import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.method.support.HandlerMethodReturnValueHandler;
import org.springframework.web.method.support.HandlerMethodReturnValueHandlerComposite;
import org.springframework.web.method.support.ModelAndViewContainer;

/**
 * Writes a {@link CachedReadEntity} of a plain GET straight to the servlet response (ADR 0034, ADR 0201): a cached
 * hit's JSON is already bytes, so Spring MVC's handling of a {@code ResponseEntity} (a header map copied into the
 * response, the producible media types and converters searched, {@code ResolvableType}s of the return type) would be
 * per-request allocation for an answer known in advance. Everything else, a request with an {@code Accept} other
 * than none, {@code *}{@code /*} or {@code application/json} included (406 and its problem stay Spring's), goes to
 * the handlers Spring MVC configured, unchanged.
 */
final class CachedReadReturnValueHandler implements HandlerMethodReturnValueHandler {

	private final HandlerMethodReturnValueHandlerComposite others;

	private CachedReadReturnValueHandler(List<HandlerMethodReturnValueHandler> others) {
		this.others = new HandlerMethodReturnValueHandlerComposite().addHandlers(others);
	}

	/** {@code handlers} with this handler first. */
	static List<HandlerMethodReturnValueHandler> first(List<HandlerMethodReturnValueHandler> handlers) {
		List<HandlerMethodReturnValueHandler> all = new ArrayList<>(handlers.size() + 1);
		all.add(new CachedReadReturnValueHandler(handlers));
		all.addAll(handlers);
		return all;
	}

	@Override
	public boolean supportsReturnType(MethodParameter returnType) {
		return ResponseEntity.class.isAssignableFrom(returnType.getParameterType());
	}

	@Override
	public void handleReturnValue(Object returnValue, MethodParameter returnType, ModelAndViewContainer mavContainer,
			NativeWebRequest webRequest) throws Exception {
		HttpServletRequest request = webRequest.getNativeRequest(HttpServletRequest.class);
		HttpServletResponse response = webRequest.getNativeResponse(HttpServletResponse.class);
		if (returnValue instanceof CachedReadEntity<?> entity && request != null && response != null
				&& "GET".equals(request.getMethod()) && acceptsJson(request.getHeader(HttpHeaders.ACCEPT))) {
			mavContainer.setRequestHandled(true);
			entity.writeTo(response);
			return;
		}
		this.others.handleReturnValue(returnValue, returnType, mavContainer, webRequest);
	}

	/** Only the forms whose answer is plainly JSON; any other goes through Spring's content negotiation. */
	private static boolean acceptsJson(String accept) {
		return accept == null || accept.equals(MediaType.ALL_VALUE) || accept.equals(MediaType.APPLICATION_JSON_VALUE);
	}

}
