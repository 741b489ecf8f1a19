package dev.concertcache.api.concert;

import org.springframework.stereotype.Component;

import dev.concertcache.api.ApiProperties;

/**
 * Which block of the cached list holds a concert id (ADR 0036): block {@code b} holds the ids from
 * {@code b * size + 1} to {@code (b + 1) * size}.
 */
@Component
class ListBlocks {

	private final int size;

	ListBlocks(ApiProperties properties) {
		int size = properties.getList().getBlockSize();
		if (size < 1) {
			throw new IllegalArgumentException("concert-cache.list.block-size must be at least 1, not " + size);
		}
		this.size = size;
	}

	/** The block of {@code id} (a concert id, at least 1). */
	long of(long id) {
		return (id - 1) / this.size;
	}

	long firstId(long block) {
		return block * this.size + 1;
	}

	long lastId(long block) {
		return (block + 1) * this.size;
	}

}
