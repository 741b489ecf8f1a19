package dev.concertcache.bareservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;

import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.startup.Tomcat;
import org.apache.catalina.valves.ValveBase;

/**
 * Tomcat (NIO) answering the crawled responses from memory in a valve, as ADR 0205's did, with the API's former
 * connector settings: `TomcatServer FILES PORT`.
 */
public final class TomcatServer {

	private TomcatServer() {
	}

	public static void main(String[] args) throws Exception {
		Map<String, byte[]> responses = Responses.load(Path.of(args[0]));
		int port = Integer.parseInt(args[1]);
		Tomcat tomcat = new Tomcat();
		tomcat.setBaseDir(System.getProperty("java.io.tmpdir") + "/bare-tomcat-" + port);
		Connector connector = new Connector("org.apache.coyote.http11.Http11NioProtocol");
		connector.setPort(port);
		connector.setProperty("address", "127.0.0.1");
		connector.setProperty("maxThreads", "64");
		connector.setProperty("minSpareThreads", "16");
		connector.setProperty("acceptCount", "1000");
		connector.setProperty("maxConnections", "8192");
		connector.setProperty("maxKeepAliveRequests", "1000");
		tomcat.setConnector(connector);
		Context context = tomcat.addContext("", null);
		context.getPipeline().addValve(new ValveBase(true) {
			@Override
			public void invoke(Request request, Response response) {
				String query = request.getQueryString();
				byte[] body = responses
					.get((query != null) ? request.getRequestURI() + "?" + query : request.getRequestURI());
				if (body == null) {
					response.setStatus(404);
					return;
				}
				response.setContentType("application/json");
				response.setContentLength(body.length);
				try {
					response.getOutputStream().write(body);
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			}
		});
		tomcat.start();
		tomcat.getServer().await();
	}

}
