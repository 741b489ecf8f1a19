package dev.concertcache.api.capture;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * {@code capture}: UP while this instance reads the binary log or stands by while another does; DEGRADED (HTTP
 * 200, as for the database and Redis in ADR 0032) while nobody here reads it: the instance still serves, but
 * changes by other applications show late. Not part of readiness: every instance shares the cause.
 */
class CaptureHealthIndicator implements HealthIndicator {

	private static final Status DEGRADED = new Status("DEGRADED",
			"A backend is down; the service answers what its caches hold");

	private final BinlogCapture capture;

	private final CaptureProperties.Mode mode;

	CaptureHealthIndicator(BinlogCapture capture, CaptureProperties.Mode mode) {
		this.capture = capture;
		this.mode = mode;
	}

	@Override
	public Health health(boolean includeDetails) {
		BinlogCapture.State state = this.capture.state();
		Health.Builder builder = switch (state) {
			case STREAMING, STANDBY -> Health.up();
			case STARTING, RETRYING, DISABLED -> Health.status(DEGRADED);
		};
		if (includeDetails) {
			builder.withDetail("state", state.name().toLowerCase(java.util.Locale.ROOT))
				.withDetail("mode", this.mode.name().toLowerCase(java.util.Locale.ROOT));
			if (this.capture.lastPosition() != null) {
				builder.withDetail("position", this.capture.lastPosition().format());
			}
			if (this.capture.lastProblem() != null) {
				builder.withDetail("problem", this.capture.lastProblem());
				if (state != BinlogCapture.State.STREAMING) {
					builder.withDetail("impact", "changes by other applications show when cached entries expire, "
							+ "up to " + this.capture.stalenessBound());
				}
			}
		}
		return builder.build();
	}

	@Override
	public Health health() {
		return health(true);
	}

}
