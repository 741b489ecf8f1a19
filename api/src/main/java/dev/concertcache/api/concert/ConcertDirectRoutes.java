package dev.concertcache.api.concert;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.concertcache.api.web.DirectRoute;

/**
 * The concert list and detail as reads Jetty answers directly when cached (ADR 0208): the same
 * templates, caches and reads as {@link ConcertController}'s GETs.
 */
@Configuration(proxyBeanMethods = false)
class ConcertDirectRoutes {

	@Bean
	DirectRoute concertPageRoute(ConcertService concerts) {
		return DirectRoute.paged("/api/concerts", "concert-page", ConcertController.DEFAULT_PAGE_SIZE,
				ConcertController.MAX_PAGE_SIZE, concerts::page);
	}

	@Bean
	DirectRoute concertRoute(ConcertService concerts) {
		return DirectRoute.byId("/api/concerts/{id}", "concert", concerts::concert);
	}

}
