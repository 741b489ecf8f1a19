package dev.concertcache.api.capture;

import java.util.HashMap;
import java.util.Map;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.GtidSet;

/**
 * Where reading of one server's binary log resumes: a GTID set where the server has GTIDs, else a file and the
 * offset of the next event. Stored in Redis as text; {@code server} ({@code host:port}) tells a position of another
 * server apart.
 */
record BinlogPosition(String server, String gtidSet, String file, long offset) {

	private static final String SEPARATOR = ";";

	static BinlogPosition gtid(String server, String gtidSet) {
		return new BinlogPosition(server, gtidSet, null, 0);
	}

	static BinlogPosition file(String server, String file, long offset) {
		return new BinlogPosition(server, null, file, offset);
	}

	/** The stored form: {@code server;gtid;<set>} or {@code server;file;<name>;<offset>}. */
	String format() {
		return (this.gtidSet != null) ? this.server + SEPARATOR + "gtid" + SEPARATOR + this.gtidSet
				: this.server + SEPARATOR + "file" + SEPARATOR + this.file + SEPARATOR + this.offset;
	}

	/** The position in {@code text}, or {@code null} if it is not one (a foreign or damaged value). */
	static BinlogPosition parse(String text) {
		if (text == null) {
			return null;
		}
		String[] parts = text.split(SEPARATOR, -1);
		try {
			if (parts.length == 3 && parts[1].equals("gtid")) {
				return gtid(parts[0], parts[2]);
			}
			if (parts.length == 4 && parts[1].equals("file")) {
				return file(parts[0], parts[2], Long.parseLong(parts[3]));
			}
		}
		catch (NumberFormatException ex) {
			// Not a position: treated as none.
		}
		return null;
	}

	/**
	 * Whether reading up to this position has read every transaction up to {@code other}, of the same server and
	 * kind: a MariaDB GTID position's sequence number is at least the other's in each of its domains (whichever
	 * server wrote them, as MariaDB orders them), a MySQL GTID set contains the other, a file position is not
	 * before the other.
	 */
	boolean includes(BinlogPosition other) {
		if (!this.server.equals(other.server)) {
			return false;
		}
		if (this.gtidSet != null && other.gtidSet != null) {
			if (isMariaDb(other.gtidSet) && isMariaDb(this.gtidSet)) {
				Map<Long, Long> reached = mariaDbSequences(this.gtidSet);
				return mariaDbSequences(other.gtidSet).entrySet().stream()
					.allMatch((domain) -> reached.getOrDefault(domain.getKey(), -1L) >= domain.getValue());
			}
			return GtidSet.parse(other.gtidSet).isContainedWithin(GtidSet.parse(this.gtidSet));
		}
		if (this.file != null && other.file != null) {
			int files = compareFiles(this.file, other.file);
			return files > 0 || (files == 0 && this.offset >= other.offset);
		}
		return false;
	}

	/**
	 * Whether a GTID position is MariaDB's ({@code domain-server-sequence,...}): MySQL's always name a server UUID
	 * followed by a colon. Read on every confirmation, so no regular expression.
	 */
	private static boolean isMariaDb(String gtidSet) {
		return gtidSet.indexOf(':') < 0;
	}

	/** The highest sequence number of each domain of a MariaDB GTID position ({@code domain-server-sequence,...}). */
	private static Map<Long, Long> mariaDbSequences(String gtidSet) {
		Map<Long, Long> sequences = new HashMap<>();
		for (String gtid : gtidSet.split(",")) {
			String[] parts = gtid.trim().split("-");
			if (parts.length == 3) {
				sequences.merge(Long.parseLong(parts[0]), Long.parseLong(parts[2]), Math::max);
			}
		}
		return sequences;
	}

	/** Binlog files of one server differ in their numbered extension ({@code mariadb-bin.000012}). */
	private static int compareFiles(String a, String b) {
		String aNumber = a.substring(a.lastIndexOf('.') + 1);
		String bNumber = b.substring(b.lastIndexOf('.') + 1);
		try {
			return Long.compare(Long.parseLong(aNumber), Long.parseLong(bNumber));
		}
		catch (NumberFormatException ex) {
			return a.compareTo(b);
		}
	}

	/** Points {@code client} at this position. */
	void applyTo(BinaryLogClient client) {
		if (this.gtidSet != null) {
			client.setGtidSet(this.gtidSet);
		}
		else {
			client.setBinlogFilename(this.file);
			client.setBinlogPosition(this.offset);
		}
	}

	@Override
	public String toString() {
		return format();
	}

}
