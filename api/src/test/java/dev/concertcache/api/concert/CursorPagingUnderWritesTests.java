package dev.concertcache.api.concert;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.concertcache.api.ApiTestSupport;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

public class CursorPagingUnderWritesTests extends ApiTestSupport {

	private static final int CONCERTS = 600;

	/**
	 * While one client pages through with small pages, another adds concerts and deletes only concerts
	 * with an odd id. Every even-id concert that existed before must be seen exactly once, nothing may be
	 * seen twice, and the order must hold.
	 */
	@Test
	public void pagingNeitherSkipsNorRepeatsWhileConcertsAreAddedAndRemoved() throws Exception {
		generate(CONCERTS);
		AtomicBoolean paging = new AtomicBoolean(true);
		AtomicInteger writes = new AtomicInteger();
		ExecutorService writer = Executors.newSingleThreadExecutor();
		Future<?> writing = writer.submit(() -> {
			long nextOdd = 1;
			while (paging.get() && nextOdd < CONCERTS) {
				assertThat(write("DELETE", "/api/concerts/" + nextOdd, null).status()).isEqualTo(204);
				assertThat(write("POST", "/api/concerts", """
						{"title":"New","artist":"a","venue":"v","startDate":"2026-01-01","endDate":"2026-01-02"}""")
					.status()).isEqualTo(201);
				nextOdd += 2;
				writes.addAndGet(2);
			}
		});
		List<Long> seen = new ArrayList<>();
		String cursor = "";
		while (cursor != null) {
			JsonNode page = get("/api/concerts?size=7&cursor=" + cursor).json();
			page.get("items").forEach((item) -> seen.add(item.get("id").asLong()));
			cursor = page.get("nextCursor").isNull() ? null : page.get("nextCursor").asString();
		}
		paging.set(false);
		writing.get();
		writer.shutdown();

		assertThat(writes.get()).as("writes that overlapped the paging").isGreaterThan(20);
		assertThat(seen).doesNotHaveDuplicates().isSorted();
		Set<Long> stable = new HashSet<>();
		for (long id = 2; id <= CONCERTS; id += 2) {
			stable.add(id);
		}
		assertThat(seen).containsAll(stable);
	}

}
