// The user journey every scenario replays, so scenarios differ only in load shape and SLOs:
// open a list page, open one concert's schedules from it, and sometimes its detail or the next page.
//
// Key popularity is Zipf-like over the whole data set: concert ids 1..CONCERTS are ranks, so id 1
// is the hottest. A user reaches a concert through the list page that shows it, which makes the
// first pages naturally hot while deep pages still get the long tail, as on a real ticketing site.
import http from 'k6/http';
import { check, fail } from 'k6';
import { Rate } from 'k6/metrics';
import { SMOKE, windowTag } from './options.js';
import { seededRandom, ZipfSampler } from './random.js';

export const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080').replace(/\/$/, '');
const concertsPath = '/api/concerts';
export const CONCERTS = positiveInt('CONCERTS', 5000);
export const PAGE_SIZE = positiveInt('PAGE_SIZE', 20);
const ZIPF_EXPONENT = Number(__ENV.ZIPF_EXPONENT || 1.05);
const SEED = positiveInt('SEED', 42);
// Setup walks at most this many list pages for their cursors: at the seeds' 1.5 M concerts a walk of
// all 75,000 pages would take minutes. Concerts deeper than that are listed from the deepest page.
const MAX_PAGES = positiveInt('MAX_PAGES', 1000);

// Shares of the optional third step; the rest of the journeys stop after the schedules.
const DETAIL_SHARE = 0.4;
const NEXT_PAGE_SHARE = 0.15;

// Share of journeys whose responses are parsed and checked field by field; the others check the
// status only (http_req_failed) and discard the body. Parsing JSON in k6's JavaScript costs the load
// generator more CPU than the cached request costs the API (ADR 0201), and on a machine the two
// share, that would measure k6. Writes and their read-backs are always checked in full.
const VERIFY_SHARE = Number(__ENV.VERIFY_SHARE || (SMOKE ? 1 : 0.02));

// A request slower than this is a failure, not a data point: it keeps every run bounded.
const TIMEOUT = '10s';

const random = seededRandom(SEED * 1000003 + __VU);
const concerts = new ZipfSampler(CONCERTS, ZIPF_EXPONENT);

export const readYourWrite = new Rate('read_your_write');

// For setup(): walks the list once to collect the cursor of every page (at most MAX_PAGES, or the first `pages`),
// since cursors are opaque. Fails the run early, with the reason, when the API is down or holds
// fewer concerts than CONCERTS.
export function collectCursors(pages = Math.min(Math.ceil(CONCERTS / PAGE_SIZE), MAX_PAGES)) {
  const cursors = [''];
  const started = Date.now();
  for (;;) {
    const cursor = cursors[cursors.length - 1];
    const res = http.get(listUrl(cursor), {
      timeout: TIMEOUT,
      tags: { endpoint: 'setup', name: 'GET /api/concerts (setup)' },
    });
    if (res.status !== 200) {
      fail(`setup: GET ${listUrl(cursor)} returned ${res.status} (is the API up at ${BASE_URL}?)`);
    }
    if (cursors.length === pages) {
      break;
    }
    const next = res.json('nextCursor');
    if (!next) {
      fail(`setup: the list ends after page ${cursors.length}; CONCERTS=${CONCERTS} needs ${pages} pages`);
    }
    cursors.push(next);
  }
  return { cursors, setupMs: Date.now() - started };
}

// A concert id by popularity.
export function pickConcert() {
  return concerts.sample(random);
}

// The cursor of the list page that shows concert `id` ('' for the first page): ids are dense and
// the list is in ascending id order. Past the pages setup collected, the deepest one.
export function cursorFor(data, id) {
  return data.cursors[pageIndexOf(data, id)];
}

function pageIndexOf(data, id) {
  return Math.min(Math.ceil(id / PAGE_SIZE), data.cursors.length) - 1;
}

// A uniform integer in 0..n-1 from the VU's seeded sequence.
export function uniformIndex(n) {
  return Math.floor(random() * n);
}

export function journey(data) {
  const id = pickConcert();
  const verify = random() < VERIFY_SHARE;
  const r = random();
  const pageIndex = pageIndexOf(data, id);
  if (r >= DETAIL_SHARE && r < DETAIL_SHARE + NEXT_PAGE_SHARE) {
    // The next page's cursor is known from setup, except past MAX_PAGES where it must be read.
    const known = pageIndex + 1 < data.cursors.length ? data.cursors[pageIndex + 1] : undefined;
    const page = getList(data.cursors[pageIndex], 'list', verify || known === undefined);
    getSchedules(id, verify);
    const next = known !== undefined ? known : page && page.nextCursor;
    if (next) {
      getList(next, 'list-next', verify);
    }
    return;
  }
  getList(data.cursors[pageIndex], 'list', verify);
  getSchedules(id, verify);
  if (r < DETAIL_SHARE) {
    getDetail(id, verify);
  }
}

// The list step alone, with the same page popularity as the journey (seed 000's single endpoint).
export function listOnly(data) {
  getList(cursorFor(data, pickConcert()), 'list', random() < VERIFY_SHARE);
}

// An admin write of a popular concert or one of its schedules, then a read that must already show
// it: the detail and the list page for a concert, the schedules for a schedule. `base` is the instance
// written to and read back from (default BASE_URL): behind a balancer a read-back may reach another instance,
// which may serve the old value for up to 1 s by contract, so a fleet writes to one instance directly.
export function writeThenRead(data, token, base = BASE_URL) {
  const id = pickConcert();
  if (random() < 0.5 || !writeSchedule(id, token, base)) {
    writeConcert(id, token, cursorFor(data, id), base);
  }
}

// With `verify`, returns the parsed page (null when the response is not a page) and checks it; without,
// discards the body and returns null.
export function getList(cursor, endpoint = 'list', verify = true, base = BASE_URL) {
  const name = cursor ? 'GET /api/concerts?cursor' : 'GET /api/concerts';
  const res = get(listUrl(cursor, base), endpoint, name, verify);
  if (!verify) {
    return null;
  }
  const page = parse(res);
  check(res, { [`${endpoint} is a page`]: () => res.status === 200 && page !== null && Array.isArray(page.items) });
  return page;
}

export function getDetail(id, verify = true, base = BASE_URL) {
  const res = get(`${base}${concertsPath}/${id}`, 'detail', 'GET /api/concerts/{id}', verify);
  if (!verify) {
    return null;
  }
  const concert = parse(res);
  check(res, { 'detail is the concert': () => res.status === 200 && concert !== null && concert.id === id });
  return concert;
}

export function getSchedules(id, verify = true, base = BASE_URL) {
  const res = get(`${base}${concertsPath}/${id}/schedules`, 'schedules', 'GET /api/concerts/{id}/schedules', verify);
  if (!verify) {
    return null;
  }
  const body = parse(res);
  check(res, {
    'schedules of the concert': () =>
      res.status === 200 && body !== null && body.concertId === id && Array.isArray(body.schedules),
  });
  return body;
}

function get(url, endpoint, name, verify) {
  return http.get(url, {
    timeout: TIMEOUT,
    tags: tagged({ endpoint, name }),
    responseType: verify ? 'text' : 'none',
  });
}

function writeConcert(id, token, cursor, base) {
  const concert = getDetail(id, true, base);
  if (!concert) {
    return;
  }
  // A fresh marker per write, so a stale cached copy can never pass the check by accident.
  const title = `${concert.title.replace(/ \(rev [^)]*\)$/, '')} (rev ${__VU}-${__ITER}-${Date.now()})`;
  const body = {
    title,
    artist: concert.artist,
    venue: concert.venue,
    description: concert.description,
    startDate: concert.startDate,
    endDate: concert.endDate,
  };
  const res = put(`${base}/api/concerts/${id}`, 'PUT /api/concerts/{id}', body, token);
  if (!check(res, { 'write concert 200': (r) => r.status === 200 })) {
    return;
  }
  const after = getDetail(id, true, base);
  sawWrite('concert', after !== null && showsWriteOrLater(after.title, title, concert.title));
  if (Math.ceil(id / PAGE_SIZE) > MAX_PAGES) {
    return; // no cursor of the page that lists it (see MAX_PAGES)
  }
  const page = getList(cursor, 'list', true, base);
  const listed = page && Array.isArray(page.items) ? page.items.find((item) => item.id === id) : undefined;
  sawWrite('concert-page', listed !== undefined && showsWriteOrLater(listed.title, title, concert.title));
}

// Popular concerts are written by several VUs at once: a read-back may show another VU's write committed after
// ours. What read-your-writes forbids is the value our write replaced (or any other that is not a write's).
function showsWriteOrLater(seen, written, replaced) {
  return seen === written || (seen !== replaced && / \(rev [^)]*\)$/.test(seen));
}

// Returns false when the concert has no schedule to change.
function writeSchedule(id, token, base) {
  const before = getSchedules(id, true, base);
  if (!before || !Array.isArray(before.schedules) || before.schedules.length === 0) {
    return false;
  }
  const schedule = before.schedules[uniformIndex(before.schedules.length)];
  const totalSeats = schedule.totalSeats >= 100000 ? 100 : schedule.totalSeats + 1;
  const res = put(
    `${base}/api/concerts/${id}/schedules/${schedule.id}`,
    'PUT /api/concerts/{id}/schedules/{scheduleId}',
    { startsAt: schedule.startsAt, totalSeats },
    token,
  );
  if (!check(res, { 'write schedule 200': (r) => r.status === 200 })) {
    return true;
  }
  const after = getSchedules(id, true, base);
  const seen = after && Array.isArray(after.schedules) ? after.schedules.find((s) => s.id === schedule.id) : undefined;
  sawWrite('schedules', seen !== undefined && seen.totalSeats === totalSeats);
  return true;
}

function sawWrite(resource, ok) {
  check(ok, { [`read your write: ${resource}`]: (seen) => seen });
  readYourWrite.add(ok, { resource });
}

function put(url, name, body, token) {
  return http.put(url, JSON.stringify(body), {
    timeout: TIMEOUT,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    tags: tagged({ endpoint: 'write', name }),
  });
}

// With WINDOW_SECONDS, the request's time window as a tag too (options.js).
function tagged(tags) {
  const window = windowTag();
  return window ? Object.assign(tags, { window }) : tags;
}

function listUrl(cursor, base = BASE_URL) {
  const query = cursor ? `cursor=${encodeURIComponent(cursor)}&size=${PAGE_SIZE}` : `size=${PAGE_SIZE}`;
  return `${base}${concertsPath}?${query}`;
}

function parse(res) {
  try {
    return res.status === 200 ? res.json() : null;
  } catch (e) {
    return null;
  }
}

function positiveInt(name, fallback) {
  const value = __ENV[name] === undefined || __ENV[name] === '' ? fallback : Number(__ENV[name]);
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`${name} must be a positive integer, got "${__ENV[name]}"`);
  }
  return value;
}
