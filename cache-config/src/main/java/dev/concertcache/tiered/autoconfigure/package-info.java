/**
 * Boot wiring of the two-tier cache.
 */
@NullMarked
package dev.concertcache.tiered.autoconfigure;

import org.jspecify.annotations.NullMarked;
