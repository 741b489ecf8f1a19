package dev.concertcache.floor;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The floor of the load tests: what a plain Spring Boot MVC application with its default settings costs to
 * serve the API's read contract (a list page by cursor, a concert, its schedules) from memory, serializing with
 * Jackson on every request. No cache, no database, no actuator, no filters of its own: {@code loadtests/run.sh}
 * measures it in the same run as the API, and the API's latency and throughput are read as ratios to it
 * (ADR 0203).
 */
@SpringBootApplication
public class FloorApplication {

	public static void main(String[] args) {
		SpringApplication.run(FloorApplication.class, args);
	}

}
