package dev.concertcache.api.capture;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.concertcache.testsupport.CommandTrap;
import dev.concertcache.testsupport.CommandTrap.Sent;

/**
 * The capture's landing thread parked before its next command to Redis until closed: the reader reads changes but
 * lands none, so it confirms nothing past them (a stalled landing, a reader far behind). The application's Redis
 * client carries a {@link CommandTrap} for it ({@link Trapped}).
 */
final class ParkedLanding implements AutoCloseable {

	private final CommandTrap commands;

	private final CommandTrap.Rule parked;

	private final CountDownLatch release = new CountDownLatch(1);

	private ParkedLanding(CommandTrap commands) {
		this.commands = commands;
		this.parked = commands.always(Sent.onThread(LandingThread.NAME), this::awaitRelease);
	}

	static ParkedLanding of(CommandTrap commands) {
		return new ParkedLanding(commands);
	}

	private void awaitRelease() {
		try {
			this.release.await(1, TimeUnit.MINUTES);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		this.commands.remove(this.parked);
		this.release.countDown();
	}

	/** A {@link CommandTrap} on the context's Lettuce client, added before the client's first connection. */
	@TestConfiguration(proxyBeanMethods = false)
	static class Trapped {

		@Bean
		CommandTrap commandTrap() {
			return new CommandTrap();
		}

		@Bean
		static BeanPostProcessor commandTrapOnTheRedisClient(ObjectProvider<CommandTrap> commands) {
			return new BeanPostProcessor() {

				@Override
				public Object postProcessAfterInitialization(Object bean, String name) {
					if (bean instanceof LettuceConnectionFactory factory) {
						((AbstractRedisClient) factory.getNativeClient()).addListener(commands.getObject());
					}
					return bean;
				}

			};
		}

	}

}
