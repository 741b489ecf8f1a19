/**
 * Spring Boot wiring of the two-tier cache: the auto-configuration, {@code tiered-cache.*} properties mapped onto
 * the core's settings ({@link dev.concertcache.tiered.TieredCacheConfiguration}), conditions and customizers. The
 * core ({@code dev.concertcache.tiered}) never imports this package.
 */
@NullMarked
package dev.concertcache.tiered.autoconfigure;

import org.jspecify.annotations.NullMarked;
