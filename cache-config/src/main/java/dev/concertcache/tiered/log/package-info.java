/**
 * The invalidation log (ADR 0039): the stream and its keys, appending to it, and the listener that reads it on a
 * connection of its own, tracks its position and tells the gate what it heard.
 */
@NullMarked
package dev.concertcache.tiered.log;

import org.jspecify.annotations.NullMarked;
