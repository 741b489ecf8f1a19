package dev.concertcache.api.capture;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.Base64;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * The two ends of a causal read (ADR 0038): the binary-log position after a commit of this service, handed to the
 * client as a token, and whether a position the change feed confirmed covers a token's. A token is the
 * position's stored form in URL-safe Base64, so that a header or a cookie carries it unchanged.
 */
public final class CommitPositions implements AutoCloseable {

	private final BinlogServer.PositionProbe probe;

	CommitPositions(BinlogServer server) {
		this.probe = server.positionProbe();
	}

	/**
	 * The server's position now, as a token: every transaction committed before the call, this request's included,
	 * is within it.
	 * @throws SQLException if the server did not answer
	 */
	public String now() throws SQLException {
		BinlogPosition position;
		try {
			position = this.probe.current();
		}
		catch (SQLException ex) {
			// The connection kept open went away (a server restart, an idle timeout): once more on a new one.
			position = this.probe.current();
		}
		return Base64.getUrlEncoder().withoutPadding().encodeToString(position.format().getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Whether a confirmed position (in the feed's stored form) covers {@code token}'s: same server, and every
	 * transaction up to the token's read.
	 * @throws IllegalArgumentException if {@code token} is not a position
	 */
	public Predicate<String> covering(String token) {
		BinlogPosition wanted = decode(token);
		if (wanted == null) {
			throw new IllegalArgumentException("not a position this service issued");
		}
		return (heard) -> {
			BinlogPosition position = BinlogPosition.parse(heard);
			return position != null && position.includes(wanted);
		};
	}

	/** The position in {@code token}, {@code null} if it holds none or one whose GTID set or file does not parse. */
	private static @Nullable BinlogPosition decode(String token) {
		try {
			BinlogPosition position = BinlogPosition
				.parse(new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8));
			// Comparing it with itself parses what comparing it with a confirmed one will.
			return (position != null && position.includes(position)) ? position : null;
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	@Override
	public void close() {
		this.probe.close();
	}

}
