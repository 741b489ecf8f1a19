/**
 * Change data capture (ADR 0033, ADR 0039): the holder of a Redis lease ({@link Leadership}) reads the database's
 * binary log, one {@link BinlogConnection} at a time from the checkpoint, which turns row events into the cache
 * keys they make stale; its {@link Lander} invalidates them on every tier of every instance, sending again only what
 * Redis refused ({@link PendingInvalidations}), and moves the checkpoint; a {@link Confirmer} tells every instance
 * how far that has landed. {@link BinlogCapture} owns the threads and the reconnect loop.
 */
package dev.concertcache.api.capture;
