package dev.concertcache.api.dashboard;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementContextFactory;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches only in the management server's child context: a context whose parent is the application
 * context that created it with a {@link ManagementContextFactory}. The application context itself, which
 * finds the dashboard classes by component scanning, has no such parent.
 */
class ManagementChildContextCondition implements ConfigurationCondition {

	@Override
	public ConfigurationPhase getConfigurationPhase() {
		return ConfigurationPhase.PARSE_CONFIGURATION;
	}

	@Override
	public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
		ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
		BeanFactory parent = (beanFactory != null) ? beanFactory.getParentBeanFactory() : null;
		return parent instanceof ListableBeanFactory listable
				&& listable.getBeanNamesForType(ManagementContextFactory.class, false, false).length > 0;
	}

}
