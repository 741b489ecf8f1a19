package dev.concertcache.api.web;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.TypeMismatchException;
import org.springframework.context.MessageSourceResolvable;
import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.transaction.TransactionException;
import org.springframework.validation.FieldError;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.HandlerMethodValidationException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

import dev.concertcache.tiered.InvalidationFailedException;
import dev.concertcache.tiered.loader.LoadRejectedException;
import dev.concertcache.tiered.loader.LoaderFailures;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.exc.MismatchedInputException;

/**
 * Turns every client error into RFC 9457 problem+json that names the offending field in {@code errors}, and an
 * unavailable database (no connection, a timeout, a load the cache's circuit breaker or bulkhead refused) or an
 * invalidation Redis did not take into 503 problem+json with {@code Retry-After} (ADR 0030), never a 500.
 */
@RestControllerAdvice
class ProblemResponses extends ResponseEntityExceptionHandler {

	/** Retry-After for database failures: about the time the cache's loader circuit breaker stays open. */
	static final Duration DATABASE_RETRY_AFTER = Duration.ofSeconds(1);

	static final String UNAVAILABLE_DETAIL = "The database is unavailable and nothing cached can answer this request; "
			+ "try again shortly";

	/**
	 * Retry-After for an invalidation Redis did not take: the time the Redis circuit breaker stays open by default
	 * ({@code tiered-cache.circuit-breaker.wait-duration-in-open-state}).
	 */
	static final Duration INVALIDATION_RETRY_AFTER = Duration.ofSeconds(2);

	static final String INVALIDATION_FAILED_DETAIL = "The invalidation did not reach every instance (Redis is "
			+ "unavailable); nothing was queued: repeat the request";

	private static final Log databaseLogger = LogFactory.getLog(ProblemResponses.class);

	@ExceptionHandler
	ProblemDetail notFound(NotFoundException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, ex.getMessage());
	}

	/** The cache did not call the database: its circuit breaker is open or its bulkhead full. */
	@ExceptionHandler
	ResponseEntity<ProblemDetail> loadRejected(LoadRejectedException ex) {
		if (databaseLogger.isDebugEnabled()) {
			databaseLogger.debug("503: " + ex.getMessage());
		}
		return unavailable(ex.getRetryAfter());
	}

	/** A strict invalidation Redis did not take: the caller holds the request and repeats it. */
	@ExceptionHandler
	ResponseEntity<ProblemDetail> invalidationFailed(InvalidationFailedException ex) {
		if (databaseLogger.isDebugEnabled()) {
			databaseLogger.debug("503: " + ex.getMessage());
		}
		return unavailable(INVALIDATION_RETRY_AFTER, INVALIDATION_FAILED_DETAIL);
	}

	/**
	 * A read or write that reached the database and failed: 503 if the database is unreachable or timed out
	 * (nothing was written: the transaction did not commit), else a 500 that is logged.
	 */
	@ExceptionHandler({ DataAccessException.class, TransactionException.class })
	ResponseEntity<ProblemDetail> databaseFailure(RuntimeException ex) {
		if (LoaderFailures.isUnavailable(ex)) {
			if (databaseLogger.isDebugEnabled()) {
				databaseLogger.debug("503: " + ex);
			}
			return unavailable(DATABASE_RETRY_AFTER);
		}
		databaseLogger.error("Database error", ex);
		return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR)
			.body(ProblemDetail.forStatusAndDetail(HttpStatus.INTERNAL_SERVER_ERROR, "Database error"));
	}

	private static ResponseEntity<ProblemDetail> unavailable(Duration retryAfter) {
		return unavailable(retryAfter, UNAVAILABLE_DETAIL);
	}

	private static ResponseEntity<ProblemDetail> unavailable(Duration retryAfter, String detail) {
		long seconds = Math.max(1, (retryAfter.toMillis() + 999) / 1000);
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, detail);
		return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
			.header(HttpHeaders.RETRY_AFTER, String.valueOf(seconds))
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.body(problem);
	}

	@ExceptionHandler
	ProblemDetail badParameter(InvalidParameterException ex) {
		return withErrors(ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getParameter() + " " + ex.getReason()),
				List.of(error(ex.getParameter(), ex.getReason())));
	}

	@Override
	protected ResponseEntity<Object> handleMethodArgumentNotValid(MethodArgumentNotValidException ex,
			HttpHeaders headers, HttpStatusCode status, WebRequest request) {
		List<Map<String, String>> errors = ex.getBindingResult()
			.getFieldErrors()
			.stream()
			.map((error) -> error(error.getField(), error.getDefaultMessage()))
			.toList();
		ProblemDetail problem = withErrors(ex.getBody(), errors);
		problem.setDetail("Invalid request content: " + summary(errors));
		return handleExceptionInternal(ex, problem, headers, status, request);
	}

	@Override
	protected ResponseEntity<Object> handleHandlerMethodValidationException(HandlerMethodValidationException ex,
			HttpHeaders headers, HttpStatusCode status, WebRequest request) {
		List<Map<String, String>> errors = ex.getParameterValidationResults()
			.stream()
			.flatMap((result) -> result.getResolvableErrors()
				.stream()
				.map((error) -> error(parameterName(result.getMethodParameter().getParameterName(), error),
						error.getDefaultMessage())))
			.toList();
		ProblemDetail problem = withErrors(ex.getBody(), errors);
		problem.setDetail("Invalid request parameters: " + summary(errors));
		return handleExceptionInternal(ex, problem, headers, status, request);
	}

	@Override
	protected ResponseEntity<Object> handleTypeMismatch(TypeMismatchException ex, HttpHeaders headers,
			HttpStatusCode status, WebRequest request) {
		String name = (ex.getPropertyName() != null) ? ex.getPropertyName() : "parameter";
		String reason = "must be a " + ((ex.getRequiredType() != null) ? ex.getRequiredType().getSimpleName() : "value")
				+ ", was '" + ex.getValue() + "'";
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, name + " " + reason);
		return handleExceptionInternal(ex, withErrors(problem, List.of(error(name, reason))), headers,
				HttpStatus.BAD_REQUEST, request);
	}

	@Override
	protected ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException ex,
			HttpHeaders headers, HttpStatusCode status, WebRequest request) {
		ProblemDetail problem = ProblemDetail.forStatus(HttpStatus.BAD_REQUEST);
		if (ex.getCause() instanceof MismatchedInputException mismatch && !mismatch.getPath().isEmpty()) {
			String field = field(mismatch.getPath());
			String reason = "has the wrong type or format";
			problem.setDetail(field + " " + reason);
			withErrors(problem, List.of(error(field, reason)));
		}
		else if (ex.getCause() instanceof DatabindException databind) {
			problem.setDetail("Malformed JSON: " + databind.getOriginalMessage());
		}
		else {
			problem.setDetail("The request body is missing or is not JSON");
		}
		return handleExceptionInternal(ex, problem, headers, HttpStatus.BAD_REQUEST, request);
	}

	/** The JSON path of a value, as the validation errors name it: {@code concertIds[2]}, {@code startDate}. */
	private static String field(List<JacksonException.Reference> path) {
		StringBuilder field = new StringBuilder();
		for (JacksonException.Reference reference : path) {
			if (reference.getPropertyName() != null) {
				field.append(field.isEmpty() ? "" : ".").append(reference.getPropertyName());
			}
			else if (reference.getIndex() >= 0) {
				field.append('[').append(reference.getIndex()).append(']');
			}
		}
		return field.isEmpty() ? "body" : field.toString();
	}

	private static String parameterName(String fallback, MessageSourceResolvable error) {
		if (error instanceof FieldError field) {
			return field.getField();
		}
		return (fallback != null) ? fallback : "parameter";
	}

	private static ProblemDetail withErrors(ProblemDetail problem, List<Map<String, String>> errors) {
		problem.setProperty("errors", errors);
		return problem;
	}

	private static Map<String, String> error(String field, String detail) {
		return Map.of("field", field, "detail", (detail != null) ? detail : "is invalid");
	}

	private static String summary(List<Map<String, String>> errors) {
		return String.join("; ", errors.stream().map((e) -> e.get("field") + " " + e.get("detail")).toList());
	}

}
