package dev.concertcache.api.invalidation;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import jakarta.validation.Valid;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.headers.Header;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;

import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.concertcache.api.concert.ConcertCaches;

/**
 * Invalidation on request, for writers that change the database without this service and cannot be seen in its
 * binary log (another database, a batch job). Admin token required, as for every write ({@code AdminTokenFilter}).
 */
@RestController
@RequestMapping("/api/cache/invalidations")
class InvalidationController {

	private final ConcertCaches concerts;

	InvalidationController(ConcertCaches concerts) {
		this.concerts = concerts;
	}

	@Operation(summary = "Invalidate cached concerts after a write made elsewhere",
			description = "Same effect as a write of these concerts through this API: each concert and its schedules"
					+ " are removed from every cache tier of every instance, and every list page. Needs"
					+ " `Authorization: Bearer <admin token>`. Done when it answers 200; a 503 means Redis did not"
					+ " take it: repeat the request after `Retry-After` (repeating is harmless).",
			responses = {
					@ApiResponse(responseCode = "200", description = "Invalidated on every instance"),
					@ApiResponse(responseCode = "400",
							description = "concertIds missing, empty, over 1000 ids, or an id not positive",
							content = @Content(mediaType = MediaType.APPLICATION_PROBLEM_JSON_VALUE,
									schema = @Schema(implementation = ProblemDetail.class))),
					@ApiResponse(responseCode = "401", description = "No or wrong admin token",
							content = @Content(mediaType = MediaType.APPLICATION_PROBLEM_JSON_VALUE,
									schema = @Schema(implementation = ProblemDetail.class))),
					@ApiResponse(responseCode = "503", description = "Redis did not take the invalidation: repeat it",
							headers = @Header(name = "Retry-After", description = "Seconds to wait before repeating",
									schema = @Schema(type = "integer")),
							content = @Content(mediaType = MediaType.APPLICATION_PROBLEM_JSON_VALUE,
									schema = @Schema(implementation = ProblemDetail.class))) })
	@PostMapping(consumes = MediaType.APPLICATION_JSON_VALUE)
	InvalidationResponse invalidate(@Valid @RequestBody InvalidationRequest request) {
		Set<Long> ids = new LinkedHashSet<>(request.concertIds());
		this.concerts.invalidateChanged(ids);
		return new InvalidationResponse(List.copyOf(ids), InvalidationResponse.CACHES);
	}

}
