package dev.concertcache.api.web;

/**
 * A request parameter with a value this API rejects; answered with 400 problem+json naming it.
 */
public class InvalidParameterException extends RuntimeException {

	private final String parameter;

	private final String reason;

	public InvalidParameterException(String parameter, String reason) {
		super(parameter + " " + reason);
		this.parameter = parameter;
		this.reason = reason;
	}

	public String getParameter() {
		return this.parameter;
	}

	public String getReason() {
		return this.reason;
	}

}
