package dev.concertcache.api.capture;

import java.time.Clock;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.concertcache.api.concert.ConcertCaches;
import dev.concertcache.api.schedule.ScheduleCaches;
import dev.concertcache.testsupport.DatabaseServer;
import dev.concertcache.tiered.TieredCacheManager;
import dev.concertcache.tiered.autoconfigure.TieredCacheProperties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * The start-up check of change data capture (ADR 0033) against real servers that are not set up for it, MariaDB
 * ({@link MariaDbCaptureStartupCheckTests}) and MySQL ({@link MySqlCaptureStartupCheckTests}):
 * {@code required} refuses to start and names the setting to change or the GRANT to run; {@code optional}
 * starts, says why it does not capture, and states how stale another application's change can then be seen.
 * A small context: the capture's configuration alone, with caches that the check never reaches.
 */
@ExtendWith(OutputCaptureExtension.class)
abstract class CaptureStartupCheckTests {

	/** The longest TTL configured below: what {@code optional} falls back to. */
	private static final Duration LONGEST_TTL = Duration.ofMinutes(7);

	/** The subclass's servers, set by its {@code @BeforeAll}: the binary log off, STATEMENT format, set up. */
	private static DatabaseServer binlogOff;

	private static DatabaseServer statementFormat;

	private static DatabaseServer shared;

	static void servers(DatabaseServer withoutBinlog, DatabaseServer withStatementFormat, DatabaseServer setUp) {
		binlogOff = withoutBinlog;
		statementFormat = withStatementFormat;
		shared = setUp;
	}

	@AfterAll
	static void removeServers() {
		binlogOff.close();
		statementFormat.close();
	}

	@Test
	void requiredModeRefusesToStartWhenTheBinaryLogIsOffAndSaysToStartTheServerWithLogBin() {
		binlogOff.start();
		capture(binlogOff, "required").run((context) -> assertThat(context).getFailure()
			.rootCause()
			.hasMessageContaining("the binary log is off (log_bin=0)")
			.hasMessageContaining("start the server with --log-bin")
			.hasMessageContaining("concert-cache.capture.mode=optional"));
	}

	@Test
	void optionalModeStartsWithTheBinaryLogOffAndWarnsThatChangesShowOnlyWhenTheTtlsRunOut(CapturedOutput output) {
		binlogOff.start();
		capture(binlogOff, "optional").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(BinlogCapture.class).state()).isEqualTo(BinlogCapture.State.DISABLED);
			assertThat(output).contains("WARN")
				.contains("the binary log is off")
				.contains("show only when cached entries expire, up to " + LONGEST_TTL);
		});
	}

	@Test
	void requiredModeRefusesToStartWhenTheBinlogFormatIsStatementAndNamesTheSettingToChange() {
		statementFormat.start();
		capture(statementFormat, "required").run((context) -> assertThat(context).getFailure()
			.rootCause()
			.hasMessageContaining("binlog_format is STATEMENT, not ROW")
			.hasMessageContaining("set binlog_format=ROW in the server configuration")
			.hasMessageContaining("SET GLOBAL binlog_format = 'ROW'"));
	}

	@Test
	void optionalModeStartsWithTheBinlogFormatStatementAndWarnsThatChangesShowOnlyWhenTheTtlsRunOut(
			CapturedOutput output) {
		statementFormat.start();
		capture(statementFormat, "optional").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(BinlogCapture.class).state()).isEqualTo(BinlogCapture.State.DISABLED);
			assertThat(output).contains("binlog_format is STATEMENT, not ROW")
				.contains("show only when cached entries expire, up to " + LONGEST_TTL);
		});
	}

	@Test
	void requiredModeRefusesAUserWithoutReplicationGrantsAndTheGrantItNamesLetsTheServiceStart() {
		DatabaseServer database = shared;
		String user = reader(database, "reader_required");
		capture(database, "required", user).run((context) -> {
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("run GRANT REPLICATION SLAVE, " + monitorPrivilege() + " ON *.* TO '" + user + "'@'");
			Matcher grant = Pattern.compile("GRANT [A-Z ,]+ ON \\*\\.\\* TO '[^']+'@'[^']+'")
				.matcher(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()).getMessage());
			assertThat(grant.find()).isTrue();
			database.sqlAsRoot(grant.group());
		});
		capture(database, "required", user).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(BinlogCapture.class).state()).isNotEqualTo(BinlogCapture.State.DISABLED);
		});
	}

	@Test
	void optionalModeStartsForAUserWithoutReplicationGrantsAndWarnsWithTheGrantAndTheStalenessBound(
			CapturedOutput output) {
		DatabaseServer database = shared;
		String user = reader(database, "reader_optional");
		capture(database, "optional", user).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(BinlogCapture.class).state()).isEqualTo(BinlogCapture.State.DISABLED);
			assertThat(output).contains("run GRANT REPLICATION SLAVE, " + monitorPrivilege() + " ON *.* TO '" + user + "'@'")
				.contains("show only when cached entries expire, up to " + LONGEST_TTL);
		});
	}

	/** The privilege that lets a user read the server's binary log position: MariaDB's, or MySQL's older name. */
	private static String monitorPrivilege() {
		return (shared.flavor() == DatabaseServer.Flavor.MYSQL) ? "REPLICATION CLIENT" : "BINLOG MONITOR";
	}

	/**
	 * A user that may read the application's tables and nothing more, as a read-only database user is set up; on
	 * MySQL with its default {@code caching_sha2_password}, never logged in yet.
	 */
	private static String reader(DatabaseServer database, String user) {
		StringBuilder sql = new StringBuilder();
		for (String host : new String[] { "127.0.0.1", "localhost" }) {
			String account = "'" + user + "'@'" + host + "'";
			sql.append("DROP USER IF EXISTS ").append(account).append("; CREATE USER ").append(account)
				.append(" IDENTIFIED BY 'secret'; GRANT SELECT ON ").append(DatabaseServer.DATABASE)
				.append(".* TO ").append(account).append("; ");
		}
		database.sqlAsRoot(sql.toString());
		return user;
	}

	private static ApplicationContextRunner capture(DatabaseServer database, String mode) {
		return capture(database, mode, DatabaseServer.USER).withPropertyValues(
				"concert-cache.capture.password=" + DatabaseServer.PASSWORD);
	}

	private static ApplicationContextRunner capture(DatabaseServer database, String mode, String user) {
		return new ApplicationContextRunner().withUserConfiguration(CaptureConfiguration.class, Collaborators.class)
			.withPropertyValues("concert-cache.capture.mode=" + mode, "spring.datasource.url=" + database.jdbcUrl(),
					"concert-cache.capture.username=" + user, "concert-cache.capture.password=secret",
					"concert-cache.capture.connect-timeout=3s", "tiered-cache.defaults.l1-ttl=30s",
					"tiered-cache.defaults.l2-ttl=" + LONGEST_TTL.toSeconds() + "s");
	}

	/**
	 * What the capture's configuration takes from the application. The check runs before the capture touches
	 * Redis or a cache, so the template never connects and the caches are stand-ins.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties({ CaptureProperties.class, TieredCacheProperties.class })
	static class Collaborators {

		@Bean
		StringRedisTemplate redisTemplate() {
			return new StringRedisTemplate(new LettuceConnectionFactory("127.0.0.1", 1));
		}

		@Bean
		ConcertCaches concertCaches() {
			return mock(ConcertCaches.class);
		}

		@Bean
		ScheduleCaches scheduleCaches() {
			return mock(ScheduleCaches.class);
		}

		@Bean
		TieredCacheManager tieredCacheManager() {
			return mock(TieredCacheManager.class);
		}

		@Bean
		Clock clock() {
			return Clock.systemUTC();
		}

	}

}
