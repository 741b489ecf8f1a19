package dev.concertcache.api.web;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an immutable response type whose cached instances are served many times: its JSON is written
 * once per instance and reused ({@link CachedJsonBodyConverter}).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
public @interface CachedJsonBody {

}
