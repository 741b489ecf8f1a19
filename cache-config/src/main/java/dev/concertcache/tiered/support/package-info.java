/**
 * The implementation of {@link dev.concertcache.tiered} (see there), with the decorators the manager hands out
 * (after-commit evictions, warm-up routing, loader only) and the pass-through manager of the mode without a cache.
 */
@NullMarked
package dev.concertcache.tiered.support;

import org.jspecify.annotations.NullMarked;
