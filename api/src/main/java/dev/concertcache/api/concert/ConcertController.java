package dev.concertcache.api.concert;

import java.net.URI;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;

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
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.support.ServletUriComponentsBuilder;

import dev.concertcache.api.web.CachedReadResponses;
import dev.concertcache.api.web.CachedReads;

/**
 * The concert list (cursor pages, by id ascending) and concert detail, and their admin writes.
 */
@RestController
@RequestMapping("/api/concerts")
class ConcertController {

	static final int DEFAULT_PAGE_SIZE = 20;

	static final int MAX_PAGE_SIZE = 100;

	private final ConcertService concerts;

	private final CachedReads reads;

	ConcertController(ConcertService concerts, CachedReads reads) {
		this.concerts = concerts;
		this.reads = reads;
	}

	/**
	 * Concerts in ascending id order (creation order): keyset paging on an immutable key, so paging through
	 * neither skips nor repeats a concert while others are added or removed.
	 */
	@GetMapping
	@CachedReadResponses
	ResponseEntity<ConcertPage> list(@RequestParam(required = false) String cursor,
			@RequestParam(defaultValue = "" + DEFAULT_PAGE_SIZE) @Min(1) @Max(MAX_PAGE_SIZE) int size,
			@RequestHeader(name = HttpHeaders.IF_NONE_MATCH, required = false) String ifNoneMatch) {
		return this.reads.ok("concert-page", this.reads.lookup(() -> this.concerts.page(cursor, size)), ifNoneMatch);
	}

	@GetMapping("/{id}")
	@CachedReadResponses
	ResponseEntity<Concert> get(@PathVariable long id,
			@RequestHeader(name = HttpHeaders.IF_NONE_MATCH, required = false) String ifNoneMatch) {
		return this.reads.ok("concert", this.reads.lookup(() -> this.concerts.concert(id)), ifNoneMatch);
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
