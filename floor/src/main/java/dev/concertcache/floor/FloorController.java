package dev.concertcache.floor;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import dev.concertcache.floor.FloorData.Concert;
import dev.concertcache.floor.FloorData.ConcertSummary;
import dev.concertcache.floor.FloorData.Schedule;

/**
 * The API's three reads as a plain application writes them: objects from memory, serialized per request. The
 * list's cursor is the API's (an id signed with HMAC-SHA256, verified on every request and signed for every next
 * page), since a client of the contract cannot be handed a forgeable one.
 */
@RestController
@RequestMapping("/api/concerts")
class FloorController {

	private static final byte VERSION = 1;

	private static final int SIGNATURE_LENGTH = 12;

	private final FloorData data;

	private final Mac prototype;

	FloorController(FloorData data, @Value("${concert-cache.cursor-secret:floor}") String secret) {
		this.data = data;
		try {
			this.prototype = Mac.getInstance("HmacSHA256");
			this.prototype.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("HmacSHA256 is part of every JDK", ex);
		}
	}

	@GetMapping
	Page list(@RequestParam(required = false) String cursor, @RequestParam(defaultValue = "20") int size) {
		if (size < 1 || size > 100) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "size must be between 1 and 100");
		}
		long after = (cursor != null) ? decode(cursor) : 0;
		List<ConcertSummary> items = this.data.page(after, size);
		long last = items.isEmpty() ? after : items.get(items.size() - 1).id();
		return new Page(items, (last < this.data.size()) ? encode(last) : null);
	}

	@GetMapping("/{id}")
	Concert concert(@PathVariable long id) {
		Concert concert = this.data.concert(id);
		if (concert == null) {
			throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no concert " + id);
		}
		return concert;
	}

	@GetMapping("/{id}/schedules")
	Schedules schedules(@PathVariable long id) {
		return new Schedules(concert(id).id(), this.data.schedules(id));
	}

	private String encode(long afterId) {
		ByteBuffer buffer = ByteBuffer.allocate(1 + Long.BYTES + SIGNATURE_LENGTH);
		buffer.put(VERSION).putLong(afterId);
		buffer.put(sign(Arrays.copyOf(buffer.array(), 1 + Long.BYTES)));
		return Base64.getUrlEncoder().withoutPadding().encodeToString(buffer.array());
	}

	private long decode(String cursor) {
		byte[] bytes;
		try {
			bytes = Base64.getUrlDecoder().decode(cursor);
		}
		catch (IllegalArgumentException ex) {
			bytes = new byte[0];
		}
		if (bytes.length != 1 + Long.BYTES + SIGNATURE_LENGTH || bytes[0] != VERSION
				|| !MessageDigest.isEqual(sign(Arrays.copyOf(bytes, 1 + Long.BYTES)),
						Arrays.copyOfRange(bytes, 1 + Long.BYTES, bytes.length))) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "cursor is not a cursor returned by this API");
		}
		return ByteBuffer.wrap(bytes, 1, Long.BYTES).getLong();
	}

	private byte[] sign(byte[] payload) {
		try {
			return Arrays.copyOf(((Mac) this.prototype.clone()).doFinal(payload), SIGNATURE_LENGTH);
		}
		catch (CloneNotSupportedException ex) {
			throw new IllegalStateException("The JDK's HmacSHA256 can be cloned", ex);
		}
	}

	record Page(List<ConcertSummary> items, String nextCursor) {
	}

	record Schedules(long concertId, List<Schedule> schedules) {
	}

}
