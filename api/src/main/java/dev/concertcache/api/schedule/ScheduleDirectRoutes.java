package dev.concertcache.api.schedule;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.concertcache.api.web.DirectRoute;

/**
 * A concert's schedules as a read Jetty answers directly when cached (ADR 0208): the same template,
 * cache and read as {@link ScheduleController#list}.
 */
@Configuration(proxyBeanMethods = false)
class ScheduleDirectRoutes {

	@Bean
	DirectRoute schedulesRoute(ScheduleService schedules) {
		return DirectRoute.byId("/api/concerts/{concertId}/schedules", "schedules", schedules::schedules);
	}

}
