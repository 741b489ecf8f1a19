package dev.concertcache.tiered.loader;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.transaction.CannotCreateTransactionException;

/**
 * Tells a loader failure that means "the loader (database) is unavailable right now" from any other: the
 * loader's circuit breaker counts only these, and an application answers them with 503 and Retry-After. Among
 * them, {@link #isUnreachable} tells a database that cannot be reached from one that answers but sheds a load.
 *
 * @author concert-cache
 */
public final class LoaderFailures {

	/** Causes followed at most, against cycles and absurd chains. */
	private static final int MAXIMUM_DEPTH = 16;

	private LoaderFailures() {
	}

	/**
	 * Whether {@code failure} or one of its causes says the loader could not be reached or did not answer in time:
	 * a rejected load ({@link LoadRejectedException}), Spring's {@link DataAccessResourceFailureException} (no
	 * connection), {@link TransientDataAccessException} (query timeout, lock timeout),
	 * {@link RecoverableDataAccessException}, {@link CannotCreateTransactionException}, JDBC's
	 * {@link SQLTransientException} (pool timeout), {@link SQLRecoverableException},
	 * {@link SQLNonTransientConnectionException} (connection lost), or a socket's {@link ConnectException} or
	 * {@link SocketTimeoutException}.
	 * @param failure what a loader or a write threw
	 * @return {@code true} if it is worth retrying later
	 */
	public static boolean isUnavailable(Throwable failure) {
		Throwable current = failure;
		for (int depth = 0; current != null && depth < MAXIMUM_DEPTH; depth++) {
			if (current instanceof LoadRejectedException || current instanceof DataAccessResourceFailureException
					|| current instanceof TransientDataAccessException
					|| current instanceof RecoverableDataAccessException
					|| current instanceof CannotCreateTransactionException || current instanceof SQLTransientException
					|| current instanceof SQLRecoverableException
					|| current instanceof SQLNonTransientConnectionException || current instanceof ConnectException
					|| current instanceof SocketTimeoutException) {
				return true;
			}
			current = (current.getCause() != current) ? current.getCause() : null;
		}
		return false;
	}

	/**
	 * Whether {@code failure} says the loader cannot be reached at all, as opposed to answering but shedding this load
	 * (a statement or lock timeout, a busy pool): a cause is a refused or lost connection ({@link ConnectException},
	 * {@link NoRouteToHostException}, {@link UnknownHostException}, {@link SQLNonTransientConnectionException},
	 * {@link SQLRecoverableException}). A load the guard rejects while the database is found out of reach carries the
	 * failure that found it so ({@link LoaderReachability}).
	 * A cache serves what its tiers hold, even what its freshness gate refused, only then: while the database answers,
	 * a read goes to it.
	 * @param failure what a loader threw
	 * @return {@code true} if the database is out of reach
	 */
	public static boolean isUnreachable(Throwable failure) {
		Throwable current = failure;
		for (int depth = 0; current != null && depth < MAXIMUM_DEPTH; depth++) {
			if (current instanceof ConnectException || current instanceof NoRouteToHostException
					|| current instanceof UnknownHostException || current instanceof SQLNonTransientConnectionException
					|| current instanceof SQLRecoverableException) {
				return true;
			}
			current = (current.getCause() != current) ? current.getCause() : null;
		}
		return false;
	}

}
