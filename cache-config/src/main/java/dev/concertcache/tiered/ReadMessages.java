package dev.concertcache.tiered;

import org.jspecify.annotations.Nullable;

/**
 * The ids and numbers of the last messages an {@link InvalidationListener} read from one server, in the order read,
 * after the id it started from. After a failover it tells the promoted replica's copies of those messages (same id,
 * same number) from the replica's own messages, whose ids may fall among them if its clock is behind the old
 * primary's, and whose numbers repeat those of the messages it never received (ADR 0035).
 * <p>
 * Bounded: past {@code capacity} messages the oldest is forgotten and its id becomes the start. A message at or
 * before the start counts as read: telling it apart would take a clock behind by more than the span of the last
 * {@code capacity} messages.
 */
final class ReadMessages {

	private final long[] millis;

	private final long[] counters;

	private final long[] numbers;

	/** Where the next message goes. */
	private int next;

	private int size;

	private long startMillis;

	private long startCounter;

	ReadMessages(int capacity) {
		this.millis = new long[capacity];
		this.counters = new long[capacity];
		this.numbers = new long[capacity];
	}

	/** Forgets every message: the next are read after {@code id}. */
	void startAfter(String id) {
		this.size = 0;
		this.next = 0;
		this.startMillis = millis(id);
		this.startCounter = counter(id);
	}

	/** Remembers a message read, with the number it carries ({@code null}: none). */
	void read(String id, @Nullable String number) {
		int capacity = this.millis.length;
		if (this.size == capacity) {
			this.startMillis = this.millis[this.next];
			this.startCounter = this.counters[this.next];
		}
		else {
			this.size++;
		}
		this.millis[this.next] = millis(id);
		this.counters[this.next] = counter(id);
		this.numbers[this.next] = number(number);
		this.next = (this.next + 1) % capacity;
	}

	/** What was read until now, for telling it among the messages of the next server. */
	Seen seen() {
		int capacity = this.millis.length;
		int first = (this.next - this.size + capacity) % capacity;
		long[] ms = new long[this.size];
		long[] ns = new long[this.size];
		long[] numbers = new long[this.size];
		for (int i = 0; i < this.size; i++) {
			int at = (first + i) % capacity;
			ms[i] = this.millis[at];
			ns[i] = this.counters[at];
			numbers[i] = this.numbers[at];
		}
		return new Seen(this.startMillis, this.startCounter, ms, ns, numbers);
	}

	private static long millis(String id) {
		int dash = id.indexOf('-');
		return Long.parseLong((dash < 0) ? id : id.substring(0, dash));
	}

	private static long counter(String id) {
		int dash = id.indexOf('-');
		return (dash < 0) ? 0 : Long.parseLong(id.substring(dash + 1));
	}

	private static long number(@Nullable String number) {
		try {
			return (number != null) ? Long.parseLong(number) : Long.MIN_VALUE;
		}
		catch (NumberFormatException ex) {
			return Long.MIN_VALUE;
		}
	}

	private static int compare(long msA, long nA, long msB, long nB) {
		int byTime = Long.compare(msA, msB);
		return (byTime != 0) ? byTime : Long.compare(nA, nB);
	}

	/** The messages read from a server, in id order, after a start. */
	static final class Seen {

		private final long startMillis;

		private final long startCounter;

		private final long[] millis;

		private final long[] counters;

		private final long[] numbers;

		private Seen(long startMillis, long startCounter, long[] millis, long[] counters, long[] numbers) {
			this.startMillis = startMillis;
			this.startCounter = startCounter;
			this.millis = millis;
			this.counters = counters;
			this.numbers = numbers;
		}

		/** Whether a message with this id comes after every message read. */
		boolean isPast(String id) {
			int last = this.millis.length - 1;
			return (last < 0) ? compare(millis(id), counter(id), this.startMillis, this.startCounter) > 0
					: compare(millis(id), counter(id), this.millis[last], this.counters[last]) > 0;
		}

		/**
		 * Whether the message with this id and number was read: at or before the start, or the same id with the same
		 * number.
		 */
		boolean wasRead(String id, @Nullable String number) {
			long ms = millis(id);
			long n = counter(id);
			if (compare(ms, n, this.startMillis, this.startCounter) <= 0) {
				return true;
			}
			int low = 0;
			int high = this.millis.length - 1;
			while (low <= high) {
				int middle = (low + high) >>> 1;
				int order = compare(this.millis[middle], this.counters[middle], ms, n);
				if (order == 0) {
					return this.numbers[middle] == number(number);
				}
				if (order < 0) {
					low = middle + 1;
				}
				else {
					high = middle - 1;
				}
			}
			return false;
		}

	}

}
