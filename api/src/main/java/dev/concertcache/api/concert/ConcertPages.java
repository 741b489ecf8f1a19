package dev.concertcache.api.concert;

import dev.concertcache.tiered.TieredCache.Lookup;

/**
 * The pages of the concert list: through the cache's blocks, or straight from the database when nothing is
 * cached.
 */
interface ConcertPages {

	/** Whether {@code tiered-cache.mode} caches at all (tiered or redis). */
	String CACHE_ON = "!'${tiered-cache.mode:none}'.equalsIgnoreCase('none')";

	/** Whether {@code tiered-cache.mode} is {@code none}. */
	String CACHE_OFF = "'${tiered-cache.mode:none}'.equalsIgnoreCase('none')";

	/**
	 * Up to {@code size} concerts with an id above {@code afterId}, and the cursor of the next page if there are
	 * more; the lookup says where the page came from and whether it is stale.
	 */
	Lookup<ConcertPage> page(long afterId, int size);

}
