package dev.concertcache.api.generate;

import javax.sql.DataSource;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * Under the {@code generate} profile, fills the database and lets the application exit.
 */
@Component
@Profile("generate")
class GenerateRunner implements ApplicationRunner {

	private final DataSource dataSource;

	private final GenerateProperties properties;

	GenerateRunner(DataSource dataSource, GenerateProperties properties) {
		this.dataSource = dataSource;
		this.properties = properties;
	}

	@Override
	public void run(ApplicationArguments args) throws Exception {
		new DataGenerator(this.dataSource).generate(this.properties.getConcerts(), this.properties.getSeed(),
				this.properties.isReplace());
	}

}
