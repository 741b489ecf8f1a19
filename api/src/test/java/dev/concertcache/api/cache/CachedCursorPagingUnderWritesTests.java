package dev.concertcache.api.cache;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import dev.concertcache.api.CachedApiTestSupport;
import dev.concertcache.api.concert.CursorPagingUnderWritesTests;
import dev.concertcache.tiered.support.DefaultTieredCacheManager;
import dev.concertcache.tiered.TieredCacheManager;

/**
 * The same paging under writes through the cache, in small blocks, so that pages span blocks that the writes make
 * stale one by one (ADR 0036).
 */
@ActiveProfiles("cache")
@TestPropertySource(properties = "concert-cache.list.block-size=8")
class CachedCursorPagingUnderWritesTests extends CursorPagingUnderWritesTests {

	@Autowired
	private TieredCacheManager caches;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		CachedApiTestSupport.redis(registry);
	}

	/**
	 * The generator writes the database directly, past the cache; the paging starts once the binary log's reader has
	 * confirmed it (until then every read goes past both tiers, ADR 0039, and this is a test of paging through them).
	 */
	@Override
	protected void generate(int concerts) {
		super.generate(concerts);
		CachedApiTestSupport.awaitCaptureConfirmedSince(this.caches, System.nanoTime());
		((DefaultTieredCacheManager) this.caches).evictAllCaches();
	}

}
