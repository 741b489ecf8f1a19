package dev.concertcache.tiered.spring;

import java.util.Optional;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;

import org.springframework.cache.Cache;
import org.springframework.cache.interceptor.SimpleKey;
import org.springframework.core.convert.ConversionService;
import org.springframework.core.convert.support.DefaultConversionService;

import dev.concertcache.tiered.loader.LoadRejectedException;
import dev.concertcache.tiered.TieredCache;
import dev.concertcache.tiered.TieredCache.Lookup;

/**
 * A {@link TieredCache} as a Spring {@link Cache}. What maps to what (ADR 0016):
 * <ul>
 * <li>{@link #get(Object, Callable)} ({@code @Cacheable(sync = true)}) is the tiers' read with a loader: L1, then
 * Redis, then the loader, called at most once per instance for concurrent misses and once across instances while
 * the Redis load lock holds. A {@code null} result is cached as "absent", for the shorter absent time to live.</li>
 * <li>{@link #evict} ({@code @CacheEvict}) and {@link #clear} ({@code allEntries = true}) are the tiers' eviction
 * of one key and of the whole cache on every instance, after the current transaction commits, as
 * {@link org.springframework.cache.transaction.TransactionAwareCacheDecorator} would defer them (the tiers defer
 * by themselves: wrapping them in that decorator would defer twice, and a synchronization registered while
 * {@code afterCommit} callbacks run is never called). {@link #evictIfPresent} and {@link #invalidate} evict now
 * whatever transaction is active, or throw.</li>
 * <li>{@link #put} ({@code @CachePut}) evicts: a value the caller computed cannot be ordered against a concurrent
 * write's eviction, so storing it could bring back what that write replaced. The next read loads the new value
 * under the lock.</li>
 * <li>{@link #get(Object)}, {@link #get(Object, Class)} and {@link #putIfAbsent} (the non-synchronized
 * {@code @Cacheable}) are not supported: declare {@code sync = true}. {@link #retrieve} (asynchronous caching)
 * keeps {@link Cache}'s default, which refuses.</li>
 * </ul>
 * Keys: the cache has one key type (a String, a boxed primitive, a UUID or a record of those). A key of another
 * type is converted by Spring's default conversion service if it can ({@code int} to {@code Long}); Spring's
 * {@link SimpleKey} (the default key of a method with several or no parameters) is refused: name the key with
 * {@code key = "..."} or a {@code KeyGenerator} that builds the key type.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class TieredSpringCache<K, V> implements Cache {

	private final TieredCache<K, V> cache;

	private final Class<K> keyType;

	private final Class<V> valueType;

	private final TieredCacheCounts counts;

	TieredSpringCache(TieredCache<K, V> cache, Class<K> keyType, Class<V> valueType, TieredCacheCounts counts) {
		this.cache = cache;
		this.keyType = keyType;
		this.valueType = valueType;
		this.counts = counts;
	}

	@Override
	public String getName() {
		return this.cache.name();
	}

	@Override
	public TieredCache<K, V> getNativeCache() {
		return this.cache;
	}

	/** The key type of this cache. */
	public Class<K> getKeyType() {
		return this.keyType;
	}

	/** The value type of this cache. */
	public Class<V> getValueType() {
		return this.valueType;
	}

	TieredCacheCounts counts() {
		return this.counts;
	}

	/**
	 * {@inheritDoc}
	 * @throws LoadRejectedException as the tiers do: the loader was needed but its circuit breaker or bulkhead
	 * refused the call and there was nothing to serve stale
	 */
	@Override
	@SuppressWarnings("unchecked")
	public <T> @Nullable T get(Object key, Callable<T> valueLoader) {
		K typed = key(key);
		Lookup<V> lookup;
		try {
			lookup = this.cache.lookup(typed, () -> Optional.ofNullable(value(call(key, valueLoader))));
		}
		catch (ValueRetrievalException | LoadRejectedException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			// What the loader threw, passed through the tiers as-is so that they can tell an unavailable
			// database (stale-if-error, the loader's breaker) from a bug; Spring's contract wraps it.
			throw new ValueRetrievalException(key, valueLoader, ex);
		}
		return (T) lookup.value().orElse(null);
	}

	/**
	 * Unsupported: a read without a loader cannot fill the cache safely (see {@link #put}).
	 * @throws UnsupportedOperationException always
	 */
	@Override
	public ValueWrapper get(Object key) {
		throw unsupported("get(key)");
	}

	/**
	 * Unsupported, as {@link #get(Object)}.
	 * @throws UnsupportedOperationException always
	 */
	@Override
	public <T> T get(Object key, @Nullable Class<T> type) {
		throw unsupported("get(key, type)");
	}

	/**
	 * Evicts {@code key} (after commit) instead of storing {@code value}: see the class description.
	 */
	@Override
	public void put(Object key, @Nullable Object value) {
		this.cache.evict(key(key));
	}

	/**
	 * Unsupported, as {@link #get(Object)}.
	 * @throws UnsupportedOperationException always
	 */
	@Override
	public ValueWrapper putIfAbsent(Object key, @Nullable Object value) {
		throw unsupported("putIfAbsent(key, value)");
	}

	@Override
	public void evict(Object key) {
		this.cache.evict(key(key));
	}

	/**
	 * Evicts {@code key} from every tier of every instance now, whatever transaction is active.
	 * @return {@code false}: whether the key was present is not known
	 * @throws dev.concertcache.tiered.InvalidationFailedException if Redis did not take the eviction
	 */
	@Override
	public boolean evictIfPresent(Object key) {
		this.cache.invalidate(key(key));
		return false;
	}

	@Override
	public void clear() {
		this.cache.evictAll();
	}

	/**
	 * Makes every entry unreachable on every instance now, whatever transaction is active.
	 * @return {@code false}: whether there were entries is not known
	 * @throws dev.concertcache.tiered.InvalidationFailedException if Redis did not take the eviction
	 */
	@Override
	public boolean invalidate() {
		this.cache.invalidateAll();
		return false;
	}

	private K key(Object key) {
		if (this.keyType.isInstance(key)) {
			return this.keyType.cast(key);
		}
		ConversionService conversion = DefaultConversionService.getSharedInstance();
		if (!(key instanceof SimpleKey) && conversion.canConvert(key.getClass(), this.keyType)) {
			K converted = conversion.convert(key, this.keyType);
			if (converted != null) {
				return converted;
			}
		}
		throw new IllegalArgumentException("Cache '" + getName() + "' has keys of " + this.keyType.getName()
				+ ", not " + key.getClass().getName() + " (" + key + "). Name the key of the annotation, for example "
				+ "key = \"#id\" or key = \"new com.example.PageKey(#after, #size)\", or give it a KeyGenerator.");
	}

	private @Nullable V value(@Nullable Object value) {
		if (value == null || this.valueType.isInstance(value)) {
			return this.valueType.cast(value);
		}
		throw new IllegalStateException("Cache '" + getName() + "' holds values of " + this.valueType.getName()
				+ ", not " + value.getClass().getName());
	}

	private static <T> @Nullable T call(Object key, Callable<T> valueLoader) {
		try {
			return valueLoader.call();
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Exception ex) {
			throw new ValueRetrievalException(key, valueLoader, ex);
		}
	}

	private UnsupportedOperationException unsupported(String operation) {
		return new UnsupportedOperationException("Cache '" + getName() + "' does not support " + operation
				+ ": it fills only through its loader. Declare @Cacheable(sync = true) or call get(key, valueLoader).");
	}

}
