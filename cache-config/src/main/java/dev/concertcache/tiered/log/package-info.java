/**
 * The invalidation log (ADR 0039): {@link dev.concertcache.tiered.log.InvalidationStream} owns the stream's
 * keys (the stream, the counter that numbers its messages, the change feed's checkpoint) and appends to it;
 * {@link dev.concertcache.tiered.log.InvalidationListener} reads it on a connection of its own
 * ({@link dev.concertcache.tiered.log.StreamConnection}, which on a cluster also follows the stream's primary) and
 * tracks its position ({@link dev.concertcache.tiered.log.StreamPosition}: the server, the last message's id and
 * number), flushing L1 when messages were lost; it moves the gate's watermarks as it hears and tells the gate of the
 * stream node's disconnects.
 */
@NullMarked
package dev.concertcache.tiered.log;

import org.jspecify.annotations.NullMarked;
