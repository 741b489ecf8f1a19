/**
 * How the service's Redis client is measured.
 */
@NullMarked
package dev.concertcache.api.redis;

import org.jspecify.annotations.NullMarked;
