/**
 * The invalidation log (ADR 0039): {@link dev.concertcache.tiered.log.InvalidationStream} owns the stream's
 * keys (the stream, the counter that numbers its messages, the change feed's checkpoint) and appends to it;
 * {@link dev.concertcache.tiered.log.InvalidationListener} reads it on a connection of its own and tracks its position
 * ({@link dev.concertcache.tiered.log.StreamPosition}: the server, the last message's id and number), flushing L1 when
 * messages were lost, and moves the gate's watermarks as it hears.
 */
@NullMarked
package dev.concertcache.tiered.log;

import org.jspecify.annotations.NullMarked;
