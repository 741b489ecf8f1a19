package dev.concertcache.tiered.autoconfigure.redis;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Redis connection over a plain socket, independent of the client under test: it reads {@code INFO} and
 * {@code CLIENT LIST} for assertions and occupies connection slots of a server. Inline commands only.
 */
final class RawRedis implements AutoCloseable {

	private final Socket socket;

	private final InputStream in;

	private RawRedis(int port) throws IOException {
		this.socket = new Socket();
		this.socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
		this.socket.setSoTimeout(5000);
		this.in = new BufferedInputStream(this.socket.getInputStream());
	}

	static RawRedis connect(int port) {
		try {
			return new RawRedis(port);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Sends an inline command and returns the reply: status, error ("-ERR ..."), integer or bulk text. */
	String command(String command) {
		try {
			this.socket.getOutputStream().write((command + "\r\n").getBytes(StandardCharsets.UTF_8));
			this.socket.getOutputStream().flush();
			String line = readLine();
			if (line == null) {
				return "(closed)";
			}
			if (line.startsWith("$")) {
				int length = Integer.parseInt(line.substring(1));
				if (length < 0) {
					return "(nil)";
				}
				byte[] body = this.in.readNBytes(length + 2);
				return new String(body, 0, length, StandardCharsets.UTF_8);
			}
			return line;
		}
		catch (IOException ex) {
			return "(closed: " + ex.getMessage() + ")";
		}
	}

	/** The fields of an {@code INFO} section, read over a connection of its own (which counts as one client). */
	static Map<String, String> info(int port, String section) {
		try (RawRedis redis = connect(port)) {
			Map<String, String> fields = new LinkedHashMap<>();
			for (String line : redis.command("INFO " + section).split("\r\n")) {
				int colon = line.indexOf(':');
				if (colon > 0 && !line.startsWith("#")) {
					fields.put(line.substring(0, colon), line.substring(colon + 1));
				}
			}
			return fields;
		}
	}

	static long infoLong(int port, String section, String field) {
		return Long.parseLong(info(port, section).get(field));
	}

	/** The lines of {@code CLIENT LIST} except the probe's own connection. */
	static List<String> clientList(int port) {
		try (RawRedis redis = connect(port)) {
			List<String> clients = new ArrayList<>();
			for (String line : redis.command("CLIENT LIST").split("\n")) {
				if (!line.isBlank() && !line.contains("cmd=client")) {
					clients.add(line.trim());
				}
			}
			return clients;
		}
	}

	/**
	 * Opens connections until the server refuses one with its max-clients error, so that every slot is taken.
	 * @return the accepted connections, to be closed by the caller
	 */
	static List<RawRedis> occupyAllSlots(int port, int atMost) {
		List<RawRedis> held = new ArrayList<>();
		for (int i = 0; i < atMost; i++) {
			RawRedis redis = connect(port);
			String reply = redis.command("PING");
			if (!reply.equals("+PONG")) {
				redis.close();
				if (!reply.contains("max number of clients reached")) {
					throw new IllegalStateException("Unexpected reply while filling the server: " + reply);
				}
				return held;
			}
			held.add(redis);
		}
		throw new IllegalStateException("The server accepted " + atMost + " connections without refusing one");
	}

	private String readLine() throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		int previous = -1;
		int current;
		while ((current = this.in.read()) != -1) {
			if (previous == '\r' && current == '\n') {
				byte[] bytes = line.toByteArray();
				return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
			}
			line.write(current);
			previous = current;
		}
		return (line.size() > 0) ? line.toString(StandardCharsets.UTF_8) : null;
	}

	@Override
	public void close() {
		try {
			this.socket.close();
		}
		catch (IOException ex) {
			// Closing a test socket: nothing to do.
		}
	}

}
