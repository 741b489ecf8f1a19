package dev.concertcache.api.schedule;

import org.springframework.cache.annotation.CacheEvict;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import dev.concertcache.api.web.NotFoundException;
import dev.concertcache.tiered.TieredCache.Lookup;

/**
 * Schedule reads through the cache (explicit, for the lookup's source: see ConcertService), and writes that evict
 * the concert's schedules once they commit.
 */
@Service
class ScheduleService {

	private final ScheduleRepository repository;

	private final ScheduleCaches caches;

	ScheduleService(ScheduleRepository repository, ScheduleCaches caches) {
		this.repository = repository;
		this.caches = caches;
	}

	/**
	 * The concert's schedules, present in the lookup; the lookup says whether they were served stale.
	 * @throws NotFoundException if there is no such concert
	 */
	Lookup<ConcertSchedules> schedules(long concertId) {
		Lookup<ConcertSchedules> lookup = this.caches.lookup(concertId, () -> this.repository.findByConcert(concertId));
		if (lookup.value().isEmpty()) {
			throw new NotFoundException("concert", concertId);
		}
		return lookup;
	}

	@Transactional
	@CacheEvict(cacheNames = ScheduleCaches.SCHEDULES, key = "#concertId")
	Schedule create(long concertId, ScheduleRequest request) {
		requireConcert(concertId);
		long id = this.repository.insert(concertId, request);
		return this.repository.findById(concertId, id).orElseThrow();
	}

	@Transactional
	@CacheEvict(cacheNames = ScheduleCaches.SCHEDULES, key = "#concertId")
	Schedule update(long concertId, long id, ScheduleRequest request) {
		requireConcert(concertId);
		if (!this.repository.update(concertId, id, request)) {
			throw new NotFoundException("schedule", id);
		}
		return this.repository.findById(concertId, id).orElseThrow();
	}

	@Transactional
	@CacheEvict(cacheNames = ScheduleCaches.SCHEDULES, key = "#concertId")
	void delete(long concertId, long id) {
		requireConcert(concertId);
		if (!this.repository.delete(concertId, id)) {
			throw new NotFoundException("schedule", id);
		}
	}

	private void requireConcert(long concertId) {
		if (!this.repository.lockConcert(concertId)) {
			throw new NotFoundException("concert", concertId);
		}
	}

}
