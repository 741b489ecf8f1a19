/**
 * The two-tier cache's API (Caffeine, then Redis, then the loader): {@link dev.concertcache.tiered.TieredCache},
 * {@link dev.concertcache.tiered.TieredCacheManager}, immutable {@link dev.concertcache.tiered.TieredCacheConfiguration}s
 * and what they answer. It knows none of the packages below it, which import one another one way:
 * <ul>
 * <li>{@code support}: the implementation, {@code DefaultTieredCacheManager} (the registry and its lifecycle, built with
 * {@code TieredCacheManagerBuilder}) and {@code DefaultTieredCache} (one cache's read and write paths), which
 * assembles the concerns below;</li>
 * <li>{@code local}: L1, Caffeine and the single flight; {@code redis}: L2 and its load protocol;</li>
 * <li>{@code log}: the invalidation stream, its listener and position; {@code gate}: what may be served now;</li>
 * <li>{@code eviction}, {@code failover}, {@code hotset}: evictions and their retries, generation moves after a
 * failover, the fleet's hot set;</li>
 * <li>{@code loader}, {@code format}, {@code metrics}: the loader guard, the stored format and the meters, which know
 * nothing of the tiers.</li>
 * </ul>
 * The concerns never use {@code support} ({@code CoreArchitectureTests}). Nothing here depends on Spring Boot's wiring
 * ({@code ...tiered.autoconfigure}); {@code ...tiered.spring} adapts the caches to Spring's cache abstraction.
 */
@NullMarked
package dev.concertcache.tiered;

import org.jspecify.annotations.NullMarked;
