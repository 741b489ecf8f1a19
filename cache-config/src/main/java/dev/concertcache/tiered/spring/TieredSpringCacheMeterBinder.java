package dev.concertcache.tiered.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.cache.CacheMeterBinder;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer's standard cache meters ({@code cache.gets{result=hit|miss}}, {@code cache.puts},
 * {@code cache.evictions}, {@code cache.size}) of one {@link TieredSpringCache}, over all its tiers; see
 * {@link TieredCacheCounts} for what each counts. The per-tier meters stay as they are.
 */
public final class TieredSpringCacheMeterBinder extends CacheMeterBinder<TieredSpringCache<?, ?>> {

	private final TieredCacheCounts counts;

	public TieredSpringCacheMeterBinder(TieredSpringCache<?, ?> cache, Iterable<Tag> tags) {
		super(cache, cache.getName(), tags);
		this.counts = cache.counts();
	}

	@Override
	protected @Nullable Long size() {
		return this.counts.size();
	}

	@Override
	protected long hitCount() {
		return this.counts.hits();
	}

	@Override
	protected Long missCount() {
		return this.counts.misses();
	}

	@Override
	protected Long evictionCount() {
		return this.counts.evictions();
	}

	@Override
	protected long putCount() {
		return this.counts.puts();
	}

	@Override
	protected void bindImplementationSpecificMetrics(MeterRegistry registry) {
		// The implementation's own meters are the per-tier tiered.cache.* family, registered by the tiers.
	}

}
