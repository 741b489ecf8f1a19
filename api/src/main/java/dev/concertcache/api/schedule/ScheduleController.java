package dev.concertcache.api.schedule;

import java.net.URI;

import jakarta.validation.Valid;

import org.springframework.http.HttpHeaders;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.support.ServletUriComponentsBuilder;

import dev.concertcache.api.web.CachedReadResponses;
import dev.concertcache.api.web.CachedReads;

/**
 * A concert's schedules (by start time) and their admin writes.
 */
@RestController
@RequestMapping("/api/concerts/{concertId}/schedules")
class ScheduleController {

	private final ScheduleService schedules;

	private final CachedReads reads;

	ScheduleController(ScheduleService schedules, CachedReads reads) {
		this.schedules = schedules;
		this.reads = reads;
	}

	@GetMapping
	@CachedReadResponses
	ResponseEntity<ConcertSchedules> list(@PathVariable long concertId,
			@RequestHeader(name = HttpHeaders.IF_NONE_MATCH, required = false) String ifNoneMatch) {
		return this.reads.ok("schedules", this.reads.lookup(() -> this.schedules.schedules(concertId)), ifNoneMatch);
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
