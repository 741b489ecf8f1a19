package dev.concertcache.bareservers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/** The crawled responses (`loadtests/lib/crawl.py`): "/api/concerts?cursor=..&size=20" to the bytes of its file. */
final class Responses {

	private Responses() {
	}

	static Map<String, byte[]> load(Path root) throws IOException {
		Map<String, byte[]> responses = new HashMap<>();
		try (Stream<Path> files = Files.walk(root)) {
			for (Path file : (Iterable<Path>) files::iterator) {
				String name = root.relativize(file).toString();
				if (name.endsWith(".body")) {
					responses.put("/" + name.substring(0, name.length() - ".body".length()), Files.readAllBytes(file));
				}
			}
		}
		return responses;
	}

}
