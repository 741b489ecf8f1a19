package dev.concertcache.tiered.format;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Which Redis bytes an L1 value was decoded from or stored as: 128 bits of their SHA-256. An L1 entry past its
 * freshness whose key, read again through the normal path, still holds the same bytes keeps its value instance
 * instead of decoding a new one, and with it whatever the application made of that instance (the API's written
 * JSON and entity tag). Same digest means same bytes, so reusing the instance serves exactly what a decode would;
 * 32 bytes per entry instead of the envelope itself.
 */
public record StoredDigest(long high, long low) {

	public static StoredDigest of(String raw) {
		ByteBuffer digest = ByteBuffer.wrap(sha256(raw));
		return new StoredDigest(digest.getLong(), digest.getLong());
	}

	/** The SHA-256 of {@code text}'s UTF-8 bytes; also {@link ValueShape}'s fingerprint. */
	static byte[] sha256(String text) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every JVM has SHA-256", ex);
		}
	}

}
