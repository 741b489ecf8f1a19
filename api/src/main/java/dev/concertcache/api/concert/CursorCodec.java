package dev.concertcache.api.concert;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.springframework.stereotype.Component;

import dev.concertcache.api.ApiProperties;
import dev.concertcache.api.web.InvalidParameterException;

/**
 * Encodes the position after which the next page starts (a concert id) as an opaque, signed token, so
 * that clients neither depend on its shape nor forge one that makes the database scan.
 */
@Component
class CursorCodec {

	private static final byte VERSION = 1;

	private static final int ID_LENGTH = Long.BYTES;

	/** 96 bits of HMAC-SHA256: enough against forgery of a pagination cursor, short in URLs. */
	private static final int SIGNATURE_LENGTH = 12;

	private final SecretKeySpec key;

	/**
	 * Initialised once and cloned per use: a Mac is not thread-safe, and looking one up and keying it per
	 * request showed in the list's profile.
	 */
	private final Mac prototype;

	CursorCodec(ApiProperties properties) {
		this.key = new SecretKeySpec(properties.getCursorSecret().getBytes(StandardCharsets.UTF_8), "HmacSHA256");
		this.prototype = newMac();
	}

	String encode(long afterId) {
		ByteBuffer buffer = ByteBuffer.allocate(1 + ID_LENGTH + SIGNATURE_LENGTH);
		buffer.put(VERSION).putLong(afterId);
		buffer.put(sign(Arrays.copyOf(buffer.array(), 1 + ID_LENGTH)));
		return Base64.getUrlEncoder().withoutPadding().encodeToString(buffer.array());
	}

	/**
	 * Decodes a cursor made by {@link #encode(long)}.
	 * @throws InvalidParameterException if the token is malformed or was altered
	 */
	long decode(String cursor) {
		byte[] bytes;
		try {
			bytes = Base64.getUrlDecoder().decode(cursor);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidParameterException("cursor", "is not a cursor returned by this API");
		}
		if (bytes.length != 1 + ID_LENGTH + SIGNATURE_LENGTH || bytes[0] != VERSION) {
			throw new InvalidParameterException("cursor", "is not a cursor returned by this API");
		}
		byte[] payload = Arrays.copyOf(bytes, 1 + ID_LENGTH);
		byte[] signature = Arrays.copyOfRange(bytes, 1 + ID_LENGTH, bytes.length);
		if (!MessageDigest.isEqual(sign(payload), signature)) {
			throw new InvalidParameterException("cursor", "has been altered");
		}
		return ByteBuffer.wrap(payload, 1, ID_LENGTH).getLong();
	}

	private byte[] sign(byte[] payload) {
		try {
			return Arrays.copyOf(((Mac) this.prototype.clone()).doFinal(payload), SIGNATURE_LENGTH);
		}
		catch (CloneNotSupportedException ex) {
			throw new IllegalStateException("The JDK's HmacSHA256 can be cloned", ex);
		}
	}

	private Mac newMac() {
		try {
			Mac mac = Mac.getInstance("HmacSHA256");
			mac.init(this.key);
			return mac;
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("HmacSHA256 is part of every JDK", ex);
		}
	}

}
