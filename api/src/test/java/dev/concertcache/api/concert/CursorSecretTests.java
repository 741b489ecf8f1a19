package dev.concertcache.api.concert;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.concertcache.api.ApiProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cursor signing key has no public default: without {@code concert-cache.cursor-secret} the service starts
 * only under the development profile.
 */
class CursorSecretTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withUserConfiguration(Properties.class)
		.withBean(CursorCodec.class);

	@Test
	void withoutASecretTheServiceRefusesToStartNamingTheProperty() {
		this.contextRunner.run((context) -> assertThat(context).getFailure()
			.rootCause()
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("concert-cache.cursor-secret (CONCERT_CACHE_CURSOR_SECRET) is not set"));
	}

	@Test
	void aBlankSecretIsNoSecret() {
		this.contextRunner.withPropertyValues("concert-cache.cursor-secret= ")
			.run((context) -> assertThat(context).hasFailed());
	}

	@Test
	void theDevelopmentProfileStartsWithoutASecretAndItsCursorsWork() {
		this.contextRunner.withPropertyValues("spring.profiles.active=" + CursorCodec.DEVELOPMENT_PROFILE)
			.run((context) -> {
				CursorCodec cursors = context.getBean(CursorCodec.class);
				assertThat(cursors.decode(cursors.encode(42))).isEqualTo(42);
			});
	}

	@Test
	void cursorsSignedWithOneSecretAreRefusedUnderAnother() {
		this.contextRunner.withPropertyValues("concert-cache.cursor-secret=one").run((one) -> this.contextRunner
			.withPropertyValues("concert-cache.cursor-secret=two")
			.run((two) -> {
				String cursor = one.getBean(CursorCodec.class).encode(42);
				assertThat(one.getBean(CursorCodec.class).decode(cursor)).isEqualTo(42);
				org.assertj.core.api.Assertions
					.assertThatExceptionOfType(dev.concertcache.api.web.InvalidParameterException.class)
					.isThrownBy(() -> two.getBean(CursorCodec.class).decode(cursor));
			}));
	}

	@EnableConfigurationProperties(ApiProperties.class)
	static class Properties {

	}

}
