package dev.concertcache.testsupport;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a test does to a server from outside, with the output Debian's {@code redis-cli} prints when it is not on a
 * terminal: a reply's text, an error's message, an integer's digits, an array's elements a line each, a nil as an
 * empty line. A command to one server is sent on a socket of its own rather than by starting {@code redis-cli}: a
 * cluster's readiness is polled with dozens of commands, and a process each took tens of milliseconds on two
 * loaded cores. {@code redis-cli --cluster} runs the real client.
 */
final class RedisCli {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private RedisCli() {
	}

	/**
	 * Runs {@code arguments} against the server on loopback {@code port}; returns the output as {@code redis-cli}
	 * prints it (an error reply too); fails when the server cannot be reached or does not answer within 30 s.
	 */
	static String run(int port, String... arguments) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), (int) TIMEOUT.toMillis());
			socket.setSoTimeout((int) TIMEOUT.toMillis());
			OutputStream out = socket.getOutputStream();
			out.write(request(arguments));
			out.flush();
			StringBuilder output = new StringBuilder();
			format(new BufferedInputStream(socket.getInputStream()), output);
			if (output.isEmpty() || output.charAt(output.length() - 1) != '\n') {
				output.append('\n');
			}
			return output.toString();
		}
		catch (IOException ex) {
			throw new IllegalStateException("redis-cli -p " + port + " " + String.join(" ", arguments) + " failed: " + ex,
					ex);
		}
	}

	/** Runs {@code redis-cli} with {@code arguments}; fails unless it exits with 0 within 30 s. */
	static String run(List<String> arguments) {
		List<String> command = new ArrayList<>();
		command.add(ServerProcess.executable("/usr/bin/redis-cli", "/usr/local/bin/redis-cli"));
		command.addAll(arguments);
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS) || process.exitValue() != 0) {
				throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
			}
			return output;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** The command as an array of bulk strings (RESP2). */
	private static byte[] request(String... arguments) {
		ByteArrayOutputStream request = new ByteArrayOutputStream();
		request.writeBytes(("*" + arguments.length + "\r\n").getBytes(StandardCharsets.UTF_8));
		for (String argument : arguments) {
			byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
			request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
			request.writeBytes(bytes);
			request.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
		}
		return request.toByteArray();
	}

	/** Appends one reply as {@code redis-cli}'s raw output shows it. */
	private static void format(InputStream in, StringBuilder output) throws IOException {
		int type = in.read();
		String line = line(in);
		switch (type) {
			case '+', '-', ':' -> output.append(line);
			case '$' -> {
				int length = Integer.parseInt(line);
				if (length >= 0) {
					output.append(new String(in.readNBytes(length), StandardCharsets.UTF_8));
					line(in);
				}
			}
			case '*' -> {
				int count = Integer.parseInt(line);
				for (int i = 0; i < count; i++) {
					if (i > 0) {
						output.append('\n');
					}
					format(in, output);
				}
			}
			case -1 -> throw new EOFException("the server closed the connection");
			default -> throw new IOException("not a RESP2 reply: " + (char) type + line);
		}
	}

	private static String line(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		int previous = -1;
		for (int next = in.read(); next != -1; next = in.read()) {
			if (previous == '\r' && next == '\n') {
				byte[] bytes = line.toByteArray();
				return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
			}
			line.write(next);
			previous = next;
		}
		throw new EOFException("the server closed the connection");
	}

}
