package dev.concertcache.api.web;

import java.nio.charset.StandardCharsets;

import org.apache.tomcat.util.buf.MessageBytes;
import org.apache.tomcat.util.http.FastHttpDateFormat;
import org.apache.tomcat.util.http.MimeHeaders;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

/**
 * Puts a cached read's response headers into Tomcat's response as bytes made once. Tomcat encodes every header
 * name and value given as a {@code String} with a new {@code CharsetEncoder} and its buffers when it writes the
 * response, about 300 bytes each: most of what a cached hit allocated beyond the request's own parsing.
 * <p>
 * Tomcat keeps the arrays it is given by reference in its recycled header slots, and {@code MessageBytes.setLong}
 * (how it writes {@code Content-Length}) reuses a slot's array of 32 bytes or more in place. A value array is
 * therefore shorter than 32 bytes, or it is given as a {@code String}: a shared array must never be written into.
 */
final class DirectResponseHeaders {

	/** Longest value array handed to Tomcat by reference (see the class comment). */
	static final int MAX_SHARED_VALUE = 31;

	private static final byte[] ETAG = ascii(HttpHeaders.ETAG);

	private static final byte[] CACHE_CONTROL = ascii(HttpHeaders.CACHE_CONTROL);

	private static final byte[] CACHE_STATUS = ascii(CacheStatus.HEADER);

	private static final byte[] CONTENT_TYPE = ascii(HttpHeaders.CONTENT_TYPE);

	private static final byte[] CONTENT_LENGTH = ascii(HttpHeaders.CONTENT_LENGTH);

	private static final byte[] DATE = ascii(HttpHeaders.DATE);

	private static final byte[] JSON = ascii(MediaType.APPLICATION_JSON_VALUE);

	/** The {@code Date} value of the current second, encoded once per second. */
	private volatile EncodedDate date = new EncodedDate("", new byte[0]);

	private DirectResponseHeaders() {
	}

	static DirectResponseHeaders create() {
		return new DirectResponseHeaders();
	}

	/**
	 * The headers of a 200 with a JSON body of {@code contentLength} bytes. {@code Date} is set here so that Tomcat
	 * does not add its own as a {@code String}; {@code Content-Length} is named here, and its value (a number, written
	 * into the slot's own buffer) set by Tomcat from the response's content length.
	 */
	void write(MimeHeaders headers, Value etag, Value cacheControl, Value cacheStatus, int contentLength) {
		etag.addTo(headers, ETAG);
		cacheControl.addTo(headers, CACHE_CONTROL);
		cacheStatus.addTo(headers, CACHE_STATUS);
		headers.addValue(CONTENT_TYPE, 0, CONTENT_TYPE.length).setBytes(JSON, 0, JSON.length);
		headers.addValue(CONTENT_LENGTH, 0, CONTENT_LENGTH.length).setLong(contentLength);
		byte[] now = currentDate();
		headers.addValue(DATE, 0, DATE.length).setBytes(now, 0, now.length);
	}

	private byte[] currentDate() {
		String now = FastHttpDateFormat.getCurrentDate();
		EncodedDate current = this.date;
		if (!current.text().equals(now)) {
			current = new EncodedDate(now, ascii(now));
			this.date = current;
		}
		return current.bytes();
	}

	static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

	private record EncodedDate(String text, byte[] bytes) {
	}

	/** A header value made once: bytes when Tomcat may share them (see the class comment), else its text. */
	static final class Value {

		private final String text;

		private final byte[] bytes;

		private Value(String text) {
			this.text = text;
			byte[] encoded = ascii(text);
			this.bytes = (encoded.length <= MAX_SHARED_VALUE) ? encoded : null;
		}

		static Value of(String text) {
			return new Value(text);
		}

		String text() {
			return this.text;
		}

		void addTo(MimeHeaders headers, byte[] name) {
			MessageBytes value = headers.addValue(name, 0, name.length);
			if (this.bytes != null) {
				value.setBytes(this.bytes, 0, this.bytes.length);
			}
			else {
				value.setString(this.text);
			}
		}

	}

}
