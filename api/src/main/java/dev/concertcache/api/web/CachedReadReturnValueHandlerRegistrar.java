package dev.concertcache.api.web;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.stereotype.Component;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * Puts {@link CachedReadReturnValueHandler} before Spring MVC's own return value handlers, which would otherwise
 * take every {@code ResponseEntity} first. Not under mode {@code none}: nothing there is a {@link CachedReadEntity}.
 */
@Component
@ConditionalOnExpression(CachedJsonBodies.CACHE_ON)
class CachedReadReturnValueHandlerRegistrar implements BeanPostProcessor {

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof RequestMappingHandlerAdapter adapter && adapter.getReturnValueHandlers() != null) {
			adapter.setReturnValueHandlers(CachedReadReturnValueHandler.first(adapter.getReturnValueHandlers()));
		}
		return bean;
	}

}
