package dev.concertcache.api.web;

/**
 * The resource a request names does not exist; answered with 404 problem+json.
 */
public class NotFoundException extends RuntimeException {

	public NotFoundException(String what, long id) {
		super(what + " " + id + " does not exist");
	}

}
