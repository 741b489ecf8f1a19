package dev.concertcache.api.invalidation;

import org.junit.jupiter.api.Test;

import dev.concertcache.api.ApiTestSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without a cache (mode {@code none}) there is nothing to invalidate: the endpoint answers as with one, and still
 * rejects bad input, so a writer's integration works the same whichever mode the service runs in.
 */
class InvalidationWithoutCacheTests extends ApiTestSupport {

	@Test
	void aValidRequestIs200AndABadOneA400() {
		assertThat(write("POST", "/api/cache/invalidations", "{\"concertIds\":[1]}").status()).isEqualTo(200);
		Response bad = write("POST", "/api/cache/invalidations", "{\"concertIds\":[-1]}");
		assertThat(bad.status()).isEqualTo(400);
		assertThat(bad.errorField()).isEqualTo("concertIds[0]");
	}

}
