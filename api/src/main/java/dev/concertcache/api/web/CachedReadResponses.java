package dev.concertcache.api.web;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.swagger.v3.oas.annotations.headers.Header;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;

/**
 * Documents, in the OpenAPI document, the HTTP caching of a read answered by {@link CachedReads}: the 200's
 * {@code ETag}, {@code Cache-Control} and {@code Cache-Status}, and the 304 of a matching {@code If-None-Match}.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@ApiResponse(responseCode = "200", description = "OK (under a cache mode, with ETag, Cache-Control and Cache-Status)",
		headers = {
				@Header(name = "ETag", description = "Strong entity tag of the body, for If-None-Match",
						schema = @Schema(type = "string")),
				@Header(name = "Cache-Control", description = "max-age per cache, or no-cache (ADR 0034)",
						schema = @Schema(type = "string")),
				@Header(name = "Cache-Status",
						description = "RFC 9211: `concert-cache; hit; detail=l1` (this instance's memory), "
								+ "`concert-cache; hit; detail=l2` (Redis), `concert-cache; fwd=miss; stored` (the "
								+ "database), `concert-cache; fwd=stale; detail=stale-if-error` (stale: the database failed)",
						schema = @Schema(type = "string")) })
@ApiResponse(responseCode = "304", description = "Not Modified: If-None-Match names the current ETag (or is `*`)",
		headers = @Header(name = "ETag", description = "The current entity tag", schema = @Schema(type = "string")),
		content = @Content)
public @interface CachedReadResponses {

}
