package dev.concertcache.api.health;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * A backend's health as this service sees it: {@link #DEGRADED} instead of {@code DOWN} when the service keeps
 * answering without it (from its caches), with the backend's own details and what is affected. Mapped to HTTP 200,
 * so that a readiness probe that includes it keeps the instance in the load balancer (ADR 0032).
 */
final class DegradableHealthIndicator implements HealthIndicator {

	/** The service answers, with less than it could: some requests fail or are served stale. */
	static final Status DEGRADED = new Status("DEGRADED",
			"A backend is down; the service answers what its caches hold");

	private final HealthIndicator backend;

	private final String impact;

	DegradableHealthIndicator(HealthIndicator backend, String impact) {
		this.backend = backend;
		this.impact = impact;
	}

	@Override
	public Health health(boolean includeDetails) {
		return degraded(this.backend.health(includeDetails), includeDetails);
	}

	@Override
	public Health health() {
		return health(true);
	}

	private Health degraded(Health health, boolean includeDetails) {
		if (!Status.DOWN.equals(health.getStatus())) {
			return health;
		}
		Health.Builder builder = Health.status(DEGRADED);
		if (includeDetails) {
			builder.withDetails(health.getDetails()).withDetail("impact", this.impact);
		}
		return builder.build();
	}

}
