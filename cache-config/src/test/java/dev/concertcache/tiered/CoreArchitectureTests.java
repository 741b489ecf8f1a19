package dev.concertcache.tiered;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The core is apart from its Boot wiring, as Spring Data Redis is apart from Boot: it never imports the
 * autoconfigure package (which maps properties onto the core's settings). The packages below the core import one
 * another one way only, and the loader guard and the stored format know nothing of the tiers that use them.
 */
class CoreArchitectureTests {

	private final JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.concertcache.tiered");

	@Test
	void theCoreDoesNotDependOnItsAutoConfiguration() {
		noClasses().that()
			.resideInAnyPackage("dev.concertcache.tiered", "dev.concertcache.tiered.loader..",
					"dev.concertcache.tiered.format..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.concertcache.tiered.autoconfigure..")
			.check(this.classes);
	}

	@Test
	void theCoreDoesNotDependOnBootsPropertyBinding() {
		noClasses().that()
			.resideInAPackage("dev.concertcache.tiered")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.boot.context.properties..", "org.springframework.boot.autoconfigure..")
			.check(this.classes);
	}

	@Test
	void theLoaderGuardAndTheStoredFormatKnowNothingOfTheTiersThatUseThem() {
		noClasses().that()
			.resideInAnyPackage("dev.concertcache.tiered.loader..", "dev.concertcache.tiered.format..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.concertcache.tiered")
			.check(this.classes);
	}

	@Test
	void thePackagesBelowTheCoreImportOneAnotherOneWayOnly() {
		slices().matching("dev.concertcache.tiered.(*)..").should().beFreeOfCycles().check(this.classes);
	}

}
