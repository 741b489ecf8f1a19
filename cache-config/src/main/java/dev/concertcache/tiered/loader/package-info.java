/**
 * What a miss may cost while the loader (the database) fails (ADR 0030): the guard every loader call goes through,
 * and which failures mean the database is unavailable or out of reach. Knows nothing of the tiers.
 */
@NullMarked
package dev.concertcache.tiered.loader;

import org.jspecify.annotations.NullMarked;
