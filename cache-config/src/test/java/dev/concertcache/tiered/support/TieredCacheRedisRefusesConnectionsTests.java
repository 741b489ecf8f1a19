package dev.concertcache.tiered.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.concertcache.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seed 004's failure from the cache's side: Redis at {@code maxclients} refuses this instance's
 * connections with "ERR max number of clients reached", and every read is still answered, from L1 and
 * the loader, each key loaded once.
 */
class TieredCacheRedisRefusesConnectionsTests {

	private static final int MAX_CLIENTS = 2;

	@RegisterExtension
	final TestScope scope = new TestScope();

	private final RedisServer redis = this.scope
		.closeAfter(new RedisServer("--maxclients", String.valueOf(MAX_CLIENTS)));

	private final ExecutorService threads = Executors.newFixedThreadPool(8);

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	@Test
	void readsSucceedFromL1AndTheLoaderWhileRedisRefusesConnections() throws Exception {
		this.redis.start();
		List<Socket> held = new ArrayList<>();
		for (int i = 0; i < MAX_CLIENTS; i++) {
			held.add(connectedClient());
		}
		CacheInstance instance = CacheInstance.startWithoutWaiting(this.redis, CacheInstance.properties());
		this.scope.closeAfter(instance);
		CacheUnderTest<Long, Item> cache = instance.cache("items", Long.class, Item.class);
		AtomicInteger loads = new AtomicInteger();

		List<Future<Optional<Item>>> reads = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			long id = i % 20;
			reads.add(this.threads.submit(() -> cache.get(id, () -> {
				loads.incrementAndGet();
				return Optional.of(new Item(id, "v" + id));
			})));
		}
		for (int i = 0; i < reads.size(); i++) {
			assertThat(reads.get(i).get()).contains(new Item(i % 20, "v" + (i % 20)));
		}
		assertThat(loads).as("loads for 20 keys read 400 times").hasValue(20);

		held.remove(0).close();
		assertThat(info(held.get(0))).containsPattern("rejected_connections:[1-9]");
		for (Socket socket : held) {
			socket.close();
		}
	}

	/** A raw client that holds one of the server's connection slots. */
	private Socket connectedClient() throws IOException {
		Socket socket = new Socket("127.0.0.1", this.redis.port());
		socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
		assertThat(readReply(socket.getInputStream())).startsWith("+PONG");
		return socket;
	}

	private static String info(Socket socket) throws IOException {
		OutputStream out = socket.getOutputStream();
		out.write("INFO stats\r\n".getBytes(StandardCharsets.US_ASCII));
		return readReply(socket.getInputStream());
	}

	private static String readReply(InputStream in) throws IOException {
		byte[] buffer = new byte[16384];
		int read = in.read(buffer);
		return new String(buffer, 0, Math.max(read, 0), StandardCharsets.US_ASCII);
	}

}
