/**
 * The two-tier cache (Caffeine, then Redis, then the loader) and its core: {@link dev.concertcache.tiered.TieredCache},
 * {@link dev.concertcache.tiered.DefaultTieredCacheManager} configured by immutable
 * {@link dev.concertcache.tiered.TieredCacheConfiguration}s. Nothing here depends on Spring Boot's wiring
 * ({@code ...tiered.autoconfigure}).
 */
@NullMarked
package dev.concertcache.tiered;

import org.jspecify.annotations.NullMarked;
