package dev.concertcache.api.web;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.jetty.servlet.JettyServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

import dev.concertcache.tiered.TieredCacheManager;

/**
 * Puts {@link DirectReadHandler} in front of the application's servlet context, in the public port's Jetty only (the
 * management server's child context does not see this customizer). Not under mode {@code none}: there are no
 * cached bytes to write.
 */
@Component
@ConditionalOnExpression(CachedJsonBodies.CACHE_ON)
class DirectReadHandlerInstaller implements WebServerFactoryCustomizer<JettyServletWebServerFactory> {

	private final ObjectProvider<DirectRoute> routes;

	private final ObjectProvider<CachedReads> reads;

	private final ObjectProvider<CachedJsonBodies> bodies;

	private final ObjectProvider<TieredCacheManager> caches;

	private final ObjectProvider<DirectReadWarmup> warmup;

	private final ObjectProvider<MeterRegistry> registry;

	private final String metricName;

	DirectReadHandlerInstaller(ObjectProvider<DirectRoute> routes, ObjectProvider<CachedReads> reads,
			ObjectProvider<CachedJsonBodies> bodies, ObjectProvider<TieredCacheManager> caches,
			ObjectProvider<DirectReadWarmup> warmup, ObjectProvider<MeterRegistry> registry,
			@Value("${management.observations.http.server.requests.name:http.server.requests}") String metricName) {
		this.routes = routes;
		this.reads = reads;
		this.bodies = bodies;
		this.caches = caches;
		this.warmup = warmup;
		this.registry = registry;
		this.metricName = metricName;
	}

	@Override
	public void customize(JettyServletWebServerFactory factory) {
		factory.addServerCustomizers((server) -> {
			DirectReadHandler handler = new DirectReadHandler(() -> new DirectReadHandler.Routes(
					this.routes.orderedStream().toList(), this.reads.getObject(), this.bodies.getObject(),
					this.caches.getObject(), this.warmup.getIfAvailable(), this.registry.getObject(),
					this.metricName));
			handler.setHandler(server.getHandler());
			server.setHandler(handler);
		});
	}

}
