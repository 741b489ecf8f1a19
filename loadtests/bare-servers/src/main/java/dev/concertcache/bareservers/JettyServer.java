package dev.concertcache.bareservers;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Jetty answering the crawled responses from memory in a handler that reports itself blocking (run on a pool
 * thread) or non-blocking (run on the selector thread that read the request): `JettyServer FILES PORT
 * blocking|non-blocking`.
 */
public final class JettyServer {

	private JettyServer() {
	}

	public static void main(String[] args) throws Exception {
		Map<String, byte[]> responses = Responses.load(Path.of(args[0]));
		InvocationType invocationType = args[2].equals("non-blocking") ? InvocationType.NON_BLOCKING
				: InvocationType.BLOCKING;
		Server server = new Server(new QueuedThreadPool(64, 16));
		ServerConnector connector = new ServerConnector(server);
		connector.setHost("127.0.0.1");
		connector.setPort(Integer.parseInt(args[1]));
		connector.setAcceptQueueSize(1000);
		server.addConnector(connector);
		server.setHandler(new Handler.Abstract(invocationType) {
			@Override
			public boolean handle(Request request, Response response, Callback callback) {
				HttpURI uri = request.getHttpURI();
				byte[] body = responses
					.get((uri.getQuery() != null) ? uri.getPath() + "?" + uri.getQuery() : uri.getPath());
				if (body == null) {
					Response.writeError(request, response, callback, 404);
					return true;
				}
				response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
				response.write(true, ByteBuffer.wrap(body), callback);
				return true;
			}
		});
		server.start();
		server.join();
	}

}
