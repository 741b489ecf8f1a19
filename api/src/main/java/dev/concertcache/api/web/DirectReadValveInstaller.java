package dev.concertcache.api.web;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * Puts {@link DirectReadValve} in front of the application's servlet, in the public port's Tomcat only (the
 * management server's child context does not see this customizer). Not under mode {@code none}: there are no
 * cached bytes to write.
 */
@Component
@ConditionalOnExpression(CachedJsonBodies.CACHE_ON)
class DirectReadValveInstaller implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {

	private final ObjectProvider<DirectRoute> routes;

	private final ObjectProvider<CachedReads> reads;

	private final ObjectProvider<CachedJsonBodies> bodies;

	private final ObjectProvider<DirectReadWarmup> warmup;

	private final ObjectProvider<MeterRegistry> registry;

	private final String metricName;

	DirectReadValveInstaller(ObjectProvider<DirectRoute> routes, ObjectProvider<CachedReads> reads,
			ObjectProvider<CachedJsonBodies> bodies, ObjectProvider<DirectReadWarmup> warmup,
			ObjectProvider<MeterRegistry> registry,
			@Value("${management.observations.http.server.requests.name:http.server.requests}") String metricName) {
		this.routes = routes;
		this.reads = reads;
		this.bodies = bodies;
		this.warmup = warmup;
		this.registry = registry;
		this.metricName = metricName;
	}

	@Override
	public void customize(TomcatServletWebServerFactory factory) {
		factory.addContextValves(new DirectReadValve(() -> new DirectReadValve.Routes(
				this.routes.orderedStream().toList(), this.reads.getObject(), this.bodies.getObject(),
				this.warmup.getIfAvailable(), this.registry.getObject(), this.metricName)));
	}

}
