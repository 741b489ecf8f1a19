package dev.concertcache.api.web;

import dev.concertcache.tiered.TieredCacheWarmup;

/**
 * Lets {@link DirectReadHandler} run the warm-up's own requests inside the cache warm-up, as the warm-up's servlet
 * filter does on the servlet path (ADR 0202), so that the warm-up also warms the JIT of the path real reads take.
 */
public interface DirectReadWarmup {

	/** The request header carrying the warm-up's token. */
	String HEADER = "Concert-Cache-Warmup";

	/** The warm-up's scope if {@code presented} is this process's token while the warm-up runs, else null. */
	TieredCacheWarmup.Scope enter(String presented);

}
