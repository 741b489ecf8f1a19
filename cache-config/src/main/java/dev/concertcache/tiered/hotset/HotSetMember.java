package dev.concertcache.tiered.hotset;

import java.util.List;

/**
 * A cache as the hot-set exchange sees it: it names its hottest keys, and fills L1 with keys another instance found
 * hot, as far as Redis holds fresh values of them.
 */
public interface HotSetMember {

	/** The cache's name, which its hot set in Redis is kept under. */
	String name();

	/** The encoded keys of this instance's hottest fresh L1 entries, hottest first, at most {@code n}. */
	List<String> hottest(int n);

	/**
	 * Fills L1 with {@code keys} (encoded) as far as Redis holds fresh values of them, as a read of each would; keys
	 * L1 holds already are skipped and nothing is loaded from the loader.
	 * @return how many entries were put into L1
	 */
	int fill(List<String> keys);

}
