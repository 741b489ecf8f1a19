/**
 * The two-tier cache as a Spring {@link org.springframework.cache.CacheManager}, so that {@code @Cacheable},
 * {@code @CacheEvict}, {@code /actuator/caches} and Micrometer's {@code cache.*} meters work over it (ADR 0016).
 */
@NullMarked
package dev.concertcache.tiered.spring;

import org.jspecify.annotations.NullMarked;
