package dev.concertcache.api.capture;

/**
 * TLS on the capture's connections, named as MariaDB Connector/J's {@code sslMode} on
 * {@code spring.datasource.url}.
 */
public enum SslMode {

	/**
	 * No TLS. A MySQL {@code caching_sha2_password} user's password then goes encrypted with the server's RSA
	 * key, which the capture asks the server for: use it on a network you trust.
	 */
	DISABLE,

	/** TLS, the server's certificate not checked. */
	TRUST,

	/** TLS, the server's certificate checked against the JVM's trust store ({@code javax.net.ssl.trustStore}). */
	VERIFY_CA,

	/** As {@link #VERIFY_CA}, and the certificate must name the host. */
	VERIFY_FULL

}
