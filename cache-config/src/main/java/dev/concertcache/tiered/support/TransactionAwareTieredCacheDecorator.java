package dev.concertcache.tiered.support;

import java.util.Optional;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.metrics.TieredCacheMetrics;

/**
 * Defers {@link #evict} and {@link #evictAll} to after the current transaction's commit, as Spring's
 * {@link org.springframework.cache.transaction.TransactionAwareCacheDecorator} does (ADR 0039), and keeps their
 * failures from the write that caused them; reads and {@code invalidate} go straight through.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class TransactionAwareTieredCacheDecorator<K, V> implements TieredCache<K, V> {

	private static final Log logger = LogFactory.getLog(TransactionAwareTieredCacheDecorator.class);

	private final TieredCache<K, V> target;

	private final TieredCacheMetrics.ForCache metrics;

	TransactionAwareTieredCacheDecorator(TieredCache<K, V> target, TieredCacheMetrics.ForCache metrics) {
		this.target = target;
		this.metrics = metrics;
	}

	@Override
	public String name() {
		return this.target.name();
	}

	@Override
	public Lookup<V> lookup(K key, Supplier<Optional<V>> loader) {
		return this.target.lookup(key, loader);
	}

	@Override
	public void evict(K key) {
		afterCommit(() -> this.target.evict(key));
	}

	@Override
	public void evictAll() {
		afterCommit(this.target::evictAll);
	}

	@Override
	public void invalidate(K key) {
		this.target.invalidate(key);
	}

	@Override
	public void invalidateAll() {
		this.target.invalidateAll();
	}

	private void afterCommit(Runnable eviction) {
		if (TransactionSynchronizationManager.isSynchronizationActive()) {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCommit() {
					runQuietly(eviction);
				}

			});
		}
		else {
			runQuietly(eviction);
		}
	}

	private void runQuietly(Runnable eviction) {
		try {
			eviction.run();
		}
		catch (RuntimeException ex) {
			// A cache error never fails the write that caused it; the TTL bounds what is left stale.
			this.metrics.error("evict");
			logger.warn("Eviction in cache '" + name() + "' failed", ex);
		}
	}

}
