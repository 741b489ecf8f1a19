package dev.concertcache.api.concert;

import java.net.URI;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.support.ServletUriComponentsBuilder;

import dev.concertcache.api.web.CacheStatus;
import dev.concertcache.tiered.TieredCache.Lookup;

/**
 * The concert list (cursor pages, by id ascending) and concert detail, and their admin writes.
 */
@RestController
@RequestMapping("/api/concerts")
class ConcertController {

	static final int DEFAULT_PAGE_SIZE = 20;

	static final int MAX_PAGE_SIZE = 100;

	private final ConcertService concerts;

	ConcertController(ConcertService concerts) {
		this.concerts = concerts;
	}

	/**
	 * Concerts in ascending id order (creation order): keyset paging on an immutable key, so paging through
	 * neither skips nor repeats a concert while others are added or removed.
	 */
	@GetMapping
	ResponseEntity<ConcertPage> list(@RequestParam(required = false) String cursor,
			@RequestParam(defaultValue = "" + DEFAULT_PAGE_SIZE) @Min(1) @Max(MAX_PAGE_SIZE) int size) {
		Lookup<ConcertPage> page = this.concerts.page(cursor, size);
		return CacheStatus.ok(page, page.value().orElseThrow());
	}

	@GetMapping("/{id}")
	ResponseEntity<Concert> get(@PathVariable long id) {
		Lookup<Concert> concert = this.concerts.concert(id);
		return CacheStatus.ok(concert, concert.value().orElseThrow());
	}

	@PostMapping
	ResponseEntity<Concert> create(@Valid @RequestBody ConcertRequest request) {
		Concert created = this.concerts.create(request);
		URI location = ServletUriComponentsBuilder.fromCurrentRequest()
			.path("/{id}")
			.buildAndExpand(created.id())
			.toUri();
		return ResponseEntity.created(location).body(created);
	}

	@PutMapping("/{id}")
	Concert update(@PathVariable long id, @Valid @RequestBody ConcertRequest request) {
		return this.concerts.update(id, request);
	}

	@DeleteMapping("/{id}")
	ResponseEntity<Void> delete(@PathVariable long id) {
		this.concerts.delete(id);
		return ResponseEntity.noContent().build();
	}

}
