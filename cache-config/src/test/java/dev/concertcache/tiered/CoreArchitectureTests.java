package dev.concertcache.tiered;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The core is apart from its Boot wiring, as Spring Data Redis is apart from Boot: it never imports the
 * autoconfigure package (which maps properties onto the core's settings). Its imports run one way: the root package
 * is the API and knows none of the packages below it; the concerns use the API but never the implementation that
 * assembles them ({@code support}); those at the bottom know nothing of the tiers that use them.
 */
class CoreArchitectureTests {

	/** The packages that know nothing of the tiers: the loader guard, the stored format, the meters. */
	private static final String[] BOTTOM = { "dev.concertcache.tiered.loader..", "dev.concertcache.tiered.format..",
			"dev.concertcache.tiered.metrics.." };

	/** The concerns below the root that the implementation ({@code support}) assembles. */
	private static final String[] CONCERNS = { "dev.concertcache.tiered.gate..", "dev.concertcache.tiered.local..",
			"dev.concertcache.tiered.redis..", "dev.concertcache.tiered.log..", "dev.concertcache.tiered.hotset..",
			"dev.concertcache.tiered.eviction..", "dev.concertcache.tiered.failover.." };

	/** Imported once for every rule: an import reads the whole core. */
	private static final JavaClasses CORE = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.concertcache.tiered");

	@Test
	void theCoreDoesNotDependOnItsAutoConfiguration() {
		noClasses().that()
			.resideOutsideOfPackages("dev.concertcache.tiered.autoconfigure..", "dev.concertcache.tiered.spring..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.concertcache.tiered.autoconfigure..")
			.check(CORE);
	}

	@Test
	void theCoreDoesNotDependOnBootsPropertyBinding() {
		noClasses().that()
			.resideOutsideOfPackages("dev.concertcache.tiered.autoconfigure..", "dev.concertcache.tiered.spring..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.boot.context.properties..", "org.springframework.boot.autoconfigure..")
			.check(CORE);
	}

	@Test
	void theLoaderGuardTheStoredFormatAndTheMetersKnowNothingOfTheTiersThatUseThem() {
		noClasses().that()
			.resideInAnyPackage(BOTTOM)
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.concertcache.tiered")
			.check(CORE);
	}

	@Test
	void thePackagesBelowTheCoreImportOneAnotherOneWayOnly() {
		slices().matching("dev.concertcache.tiered.(*)..").should().beFreeOfCycles().check(CORE);
	}

	@Test
	void theApiKnowsNothingOfThePackagesBelowIt() {
		noClasses().that()
			.resideInAPackage("dev.concertcache.tiered")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.concertcache.tiered.*..")
			.check(CORE);
	}

	@Test
	void theConcernsNeverUseTheImplementationThatAssemblesThem() {
		noClasses().that()
			.resideInAnyPackage(CONCERNS)
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.concertcache.tiered.support..")
			.check(CORE);
	}

	@Test
	void theLocalTierKnowsNothingOfRedis() {
		noClasses().that()
			.resideInAPackage("dev.concertcache.tiered.local..")
			.should()
			.dependOnClassesThat()
			.haveSimpleNameStartingWith("Redis")
			.check(CORE);
	}

	@Test
	void theRedisTierKnowsNothingOfTheInvalidationLog() {
		noClasses().that()
			.resideInAPackage("dev.concertcache.tiered.redis..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.concertcache.tiered.log..")
			.check(CORE);
	}

}
