package dev.concertcache.api.capture;

import com.github.shyiko.mysql.binlog.BinaryLogClient;

/**
 * Where reading of one server's binary log resumes: a GTID set where the server has GTIDs, else a file and an
 * offset. Stored in Redis as text; {@code server} ({@code host:port}) tells a position of another server apart.
 *
 * @param server the server the position belongs to, {@code host:port}
 * @param gtidSet the GTID set of the last transaction processed, or {@code null} in file mode
 * @param file the binlog file, in file mode
 * @param offset the offset in {@code file} of the next event, in file mode
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
