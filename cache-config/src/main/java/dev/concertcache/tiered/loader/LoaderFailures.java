package dev.concertcache.tiered.loader;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.function.Predicate;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.transaction.CannotCreateTransactionException;

/**
 * Tells a loader failure that means "the loader (database) is unavailable right now" from any other: the
 * loader's circuit breaker counts only these, and an application answers them with 503 and Retry-After. Among
 * them, {@link #isUnreachable} tells a database that cannot be reached from one that answers but sheds a load.
 */
public final class LoaderFailures {

	/** Causes followed at most, against cycles and absurd chains. */
	private static final int MAXIMUM_DEPTH = 16;

	private LoaderFailures() {
	}

	/**
	 * Whether {@code failure} or one of its causes says the loader could not be reached or did not answer in time
	 * (a rejected load included).
	 * @param failure what a loader or a write threw
	 * @return {@code true} if it is worth retrying later
	 */
	public static boolean isUnavailable(Throwable failure) {
		return anyCause(failure, (cause) -> cause instanceof LoadRejectedException
				|| cause instanceof DataAccessResourceFailureException || cause instanceof TransientDataAccessException
				|| cause instanceof RecoverableDataAccessException || cause instanceof CannotCreateTransactionException
				|| cause instanceof SQLTransientException || cause instanceof SQLRecoverableException
				|| cause instanceof SQLNonTransientConnectionException || cause instanceof ConnectException
				|| cause instanceof SocketTimeoutException);
	}

	/**
	 * Whether {@code failure} or one of its causes says the loader cannot be reached at all (a refused or lost
	 * connection), as opposed to answering but shedding this load (a statement or lock timeout, a busy pool). A load
	 * the guard rejects while the database is found out of reach carries the failure that found it so
	 * ({@link LoaderReachability}). A cache serves what its tiers hold, even what its freshness gate refused, only
	 * then: while the database answers, a read goes to it.
	 * @param failure what a loader threw
	 * @return {@code true} if the database is out of reach
	 */
	public static boolean isUnreachable(Throwable failure) {
		return anyCause(failure, (cause) -> cause instanceof ConnectException || cause instanceof NoRouteToHostException
				|| cause instanceof UnknownHostException || cause instanceof SQLNonTransientConnectionException
				|| cause instanceof SQLRecoverableException);
	}

	private static boolean anyCause(Throwable failure, Predicate<Throwable> test) {
		Throwable current = failure;
		for (int depth = 0; current != null && depth < MAXIMUM_DEPTH; depth++) {
			if (test.test(current)) {
				return true;
			}
			current = (current.getCause() != current) ? current.getCause() : null;
		}
		return false;
	}

}
