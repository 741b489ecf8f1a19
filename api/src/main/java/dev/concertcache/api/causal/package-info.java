/**
 * Causal reads across instances (ADR 0038): a write answers with its commit's binary-log position, and a read that
 * carries one is served by any instance only once that instance has heard the change feed confirm it, or else from
 * the database.
 */
@NullMarked
package dev.concertcache.api.causal;

import org.jspecify.annotations.NullMarked;
