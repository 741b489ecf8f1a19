package dev.concertcache.api;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the concert API.
 */
@ConfigurationProperties("concert-cache")
public class ApiProperties {

	/**
	 * Bearer token that write requests must present. Unset means every write is refused.
	 */
	private String adminToken;

	/**
	 * Key that signs list cursors, so that a client cannot forge or alter one. All instances behind one
	 * load balancer must share it.
	 */
	private String cursorSecret = "concert-cache-cursor";

	public String getAdminToken() {
		return this.adminToken;
	}

	public void setAdminToken(String adminToken) {
		this.adminToken = adminToken;
	}

	public String getCursorSecret() {
		return this.cursorSecret;
	}

	public void setCursorSecret(String cursorSecret) {
		this.cursorSecret = cursorSecret;
	}

}
