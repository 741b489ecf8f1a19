package dev.concertcache.api.schedule;

import java.net.URI;

import jakarta.validation.Valid;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.support.ServletUriComponentsBuilder;

import dev.concertcache.api.web.CacheStatus;
import dev.concertcache.tiered.TieredCache.Lookup;

/**
 * A concert's schedules (by start time) and their admin writes.
 */
@RestController
@RequestMapping("/api/concerts/{concertId}/schedules")
class ScheduleController {

	private final ScheduleService schedules;

	ScheduleController(ScheduleService schedules) {
		this.schedules = schedules;
	}

	@GetMapping
	ResponseEntity<ConcertSchedules> list(@PathVariable long concertId) {
		Lookup<ConcertSchedules> schedules = this.schedules.schedules(concertId);
		return CacheStatus.ok(schedules, schedules.value().orElseThrow());
	}

	@PostMapping
	ResponseEntity<Schedule> create(@PathVariable long concertId, @Valid @RequestBody ScheduleRequest request) {
		Schedule created = this.schedules.create(concertId, request);
		URI location = ServletUriComponentsBuilder.fromCurrentRequest()
			.path("/{id}")
			.buildAndExpand(created.id())
			.toUri();
		return ResponseEntity.created(location).body(created);
	}

	@PutMapping("/{scheduleId}")
	Schedule update(@PathVariable long concertId, @PathVariable long scheduleId,
			@Valid @RequestBody ScheduleRequest request) {
		return this.schedules.update(concertId, scheduleId, request);
	}

	@DeleteMapping("/{scheduleId}")
	ResponseEntity<Void> delete(@PathVariable long concertId, @PathVariable long scheduleId) {
		this.schedules.delete(concertId, scheduleId);
		return ResponseEntity.noContent().build();
	}

}
