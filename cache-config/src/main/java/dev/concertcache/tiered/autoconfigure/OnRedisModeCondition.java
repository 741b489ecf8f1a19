package dev.concertcache.tiered.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

import dev.concertcache.tiered.TieredCacheMode;

/**
 * Matches when {@code tiered-cache.mode} is TIERED or REDIS, the modes that use Redis.
 */
class OnRedisModeCondition extends SpringBootCondition {

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		TieredCacheMode mode = Binder.get(context.getEnvironment())
			.bind("tiered-cache.mode", TieredCacheMode.class)
			.orElse(TieredCacheMode.NONE);
		if (mode == TieredCacheMode.NONE) {
			return ConditionOutcome.noMatch("tiered-cache.mode is NONE");
		}
		return ConditionOutcome.match("tiered-cache.mode is " + mode);
	}

}
