package dev.concertcache.api.concert;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.env.Environment;
import org.springframework.core.env.Profiles;
import org.springframework.stereotype.Component;

import dev.concertcache.api.ApiProperties;
import dev.concertcache.api.web.InvalidParameterException;

/**
 * Encodes the position after which the next page starts (a concert id) as an opaque, signed token, so
 * that clients neither depend on its shape nor forge one that makes the database scan.
 */
@Component
class CursorCodec {

	/**
	 * The profile under which the service starts without {@code concert-cache.cursor-secret}, signing with a key
	 * anyone can read here: a developer's machine, never a deployment.
	 */
	static final String DEVELOPMENT_PROFILE = "dev";

	private static final String DEVELOPMENT_SECRET = "concert-cache-development-cursor";

	private static final Log logger = LogFactory.getLog(CursorCodec.class);

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

	CursorCodec(ApiProperties properties, Environment environment) {
		this.key = new SecretKeySpec(secret(properties, environment).getBytes(StandardCharsets.UTF_8), "HmacSHA256");
		this.prototype = newMac();
	}

	private static String secret(ApiProperties properties, Environment environment) {
		String secret = properties.getCursorSecret();
		if (secret != null && !secret.isBlank()) {
			return secret;
		}
		if (!environment.acceptsProfiles(Profiles.of(DEVELOPMENT_PROFILE))) {
			// A published default would let anyone sign cursors that make the database scan from any position.
			throw new IllegalStateException("concert-cache.cursor-secret (CONCERT_CACHE_CURSOR_SECRET) is not set: "
					+ "set it to a long random secret shared by every instance, or run with the '"
					+ DEVELOPMENT_PROFILE + "' profile on a development machine");
		}
		logger.warn("concert-cache.cursor-secret is not set: list cursors are signed with the development key "
				+ "(profile '" + DEVELOPMENT_PROFILE + "')");
		return DEVELOPMENT_SECRET;
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
