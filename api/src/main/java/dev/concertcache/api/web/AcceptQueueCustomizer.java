package dev.concertcache.api.web;

import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.ServerConnector;

import org.springframework.boot.jetty.servlet.JettyServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

import dev.concertcache.api.ApiProperties;

/**
 * Sets the public port's listen backlog to {@code concert-cache.http.accept-queue-size}: Spring Boot has no
 * property for Jetty's.
 */
@Component
class AcceptQueueCustomizer implements WebServerFactoryCustomizer<JettyServletWebServerFactory> {

	private final int size;

	AcceptQueueCustomizer(ApiProperties properties) {
		this.size = properties.getHttp().getAcceptQueueSize();
	}

	@Override
	public void customize(JettyServletWebServerFactory factory) {
		factory.addServerCustomizers((server) -> {
			for (Connector connector : server.getConnectors()) {
				if (connector instanceof ServerConnector serverConnector) {
					serverConnector.setAcceptQueueSize(this.size);
				}
			}
		});
	}

}
