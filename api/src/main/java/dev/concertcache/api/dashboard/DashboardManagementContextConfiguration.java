package dev.concertcache.api.dashboard;

import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;

/**
 * Adds the built-in dashboard to the management server's own context (port 8081), so that it is never
 * reachable on the public port (ADR 0110). Listed in
 * {@code META-INF/spring/org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration.imports};
 * when the management server shares the public port there is no child context and no dashboard.
 * <p>
 * The application's component scan sees this package too, so this class and the controller carry
 * {@link ManagementChildContextCondition}, which keeps them out of the public context.
 */
@ManagementContextConfiguration(value = ManagementContextType.CHILD, proxyBeanMethods = false)
@Conditional(ManagementChildContextCondition.class)
@Import(DashboardController.class)
class DashboardManagementContextConfiguration {

}
