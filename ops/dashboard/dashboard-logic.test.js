// The dashboard's arithmetic, without a browser or an API: the page script exports its DOM-free part to Node.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const dashboard = require(path.join(__dirname, '../../api/src/main/resources/dashboard/dashboard.js'));

const T0 = 1_000_000;

/** A scrape in Micrometer's text format with the given counter values. */
function scrape({ l1hit = 0, l1miss = 0, l2hit = 0, l2miss = 0, loads = 0, requests = 0, buckets = {}, extra = '' }) {
  const lines = [
    '# HELP tiered_cache_gets_total Cache lookups',
    '# TYPE tiered_cache_gets_total counter',
    `tiered_cache_gets_total{application="concert-cache",cache="concert",result="hit",tier="l1"} ${l1hit}`,
    `tiered_cache_gets_total{application="concert-cache",cache="concert",result="miss",tier="l1"} ${l1miss}`,
    `tiered_cache_gets_total{application="concert-cache",cache="concert",result="hit",tier="l2"} ${l2hit}`,
    `tiered_cache_gets_total{application="concert-cache",cache="concert",result="miss",tier="l2"} ${l2miss}`,
    `tiered_cache_loads_seconds_count{cache="concert",result="success"} ${loads}`,
    'resilience4j_circuitbreaker_state{name="tiered-cache-redis",state="closed"} 1.0',
    'resilience4j_circuitbreaker_state{name="tiered-cache-redis",state="open"} 0.0',
    'resilience4j_circuitbreaker_state{name="some-other-breaker",state="open"} 1.0',
    `http_server_requests_seconds_count{method="GET",outcome="SUCCESS",status="200",uri="/api/concerts"} ${requests}`,
    'http_server_requests_seconds_count{method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"} 500',
    'hikaricp_connections_pending{pool="HikariPool-1"} 3.0',
  ];
  for (const [le, count] of Object.entries(buckets)) {
    lines.push('http_server_requests_seconds_bucket{method="GET",outcome="SUCCESS",status="200",'
      + `uri="/api/concerts",le="${le}"} ${count}`);
  }
  return lines.join('\n') + '\n' + extra;
}

function view(before, after, seconds = 2) {
  const older = dashboard.snapshot(before, T0);
  const newer = dashboard.snapshot(after, T0 + seconds * 1000);
  return dashboard.derive(dashboard.increase(older, newer), seconds, newer);
}

test('parses labels with escapes, commas and braces, special values and timestamps', () => {
  const samples = [];
  dashboard.parseExposition([
    '# TYPE x counter',
    'x{a="q\\"uo,te}",b="back\\\\slash",c="new\\nline"} 1.5 1700000000000',
    'x{le="+Inf"} +Inf',
    'x NaN',
    'y{a="b"} 7',
    'x{broken="no end} 3',
    '',
  ].join('\n'), (name) => name === 'x', (name, labels, value) => samples.push([labels, value]));
  assert.equal(samples.length, 3);
  assert.deepEqual(samples[0], [{ a: 'q"uo,te}', b: 'back\\slash', c: 'new\nline' }, 1.5]);
  assert.deepEqual(samples[1], [{ le: '+Inf' }, Infinity]);
  assert.ok(Number.isNaN(samples[2][1]));
});

test('overall hit ratio is (L1 hits + L2 hits) / L1 lookups over the window', () => {
  const v = view(scrape({ l1hit: 100, l1miss: 20, l2hit: 10, l2miss: 10 }),
    scrape({ l1hit: 190, l1miss: 30, l2hit: 16, l2miss: 14, loads: 4, requests: 40 }));
  // window: 90 L1 hits, 10 L1 misses, 6 L2 hits, 4 L2 misses
  assert.equal(v['hit-ratio-overall'], (90 + 6) / 100);
  assert.equal(v['hit-ratio-l1'], 0.9);
  assert.equal(v['hit-ratio-l2'], 0.6);
  assert.equal(v['db-loads-rate'], 2);
  assert.equal(v.caches.length, 1);
  assert.equal(v.caches[0].name, 'concert');
  assert.equal(v.caches[0]['cache-hit-ratio-overall'], 0.96);
  assert.equal(v.caches[0]['cache-lookups-rate'], 50);
});

test('the redis-only mode has no L1, so every lookup starts at L2', () => {
  const onlyL2 = (hit, miss) => [
    `tiered_cache_gets_total{cache="concert",result="hit",tier="l2"} ${hit}`,
    `tiered_cache_gets_total{cache="concert",result="miss",tier="l2"} ${miss}`,
  ].join('\n');
  const v = view(onlyL2(0, 0), onlyL2(30, 10));
  assert.equal(v['hit-ratio-overall'], 0.75);
  assert.equal(v['hit-ratio-l1'], null);
  assert.equal(v['hit-ratio-l2'], 0.75);
});

test('request rate counts API routes only, not the management server', () => {
  const v = view(scrape({ requests: 10 }), scrape({ requests: 50 }) + '\n'
    + 'http_server_requests_seconds_count{method="GET",status="200",uri="/dashboard"} 3');
  assert.equal(v['requests-rate'], 20);
  assert.deepEqual(v.routes.map((r) => r.name), ['GET /api/concerts']);
  assert.equal(v['breaker-state'], 'closed');
  assert.equal(v['hikari-pending'], 3);
});

test('a counter that goes down was reset: the application restarted and counted from zero', () => {
  const v = view(scrape({ requests: 1000 }), scrape({ requests: 30 }));
  assert.equal(v['requests-rate'], 15);
});

test('a series that appears during the window counts from zero', () => {
  const older = dashboard.snapshot('', T0);
  const newer = dashboard.snapshot(scrape({ requests: 8 }), T0 + 4000);
  const v = dashboard.derive(dashboard.increase(older, newer), 4, newer);
  assert.equal(v['requests-rate'], 2);
});

test('quantiles interpolate inside the bucket as histogram_quantile does', () => {
  const buckets = [[0.1, 50], [0.2, 90], [0.5, 100], [Infinity, 100]];
  assert.equal(dashboard.quantile(0.5, buckets.map((b) => [...b])), 0.1);
  assert.ok(Math.abs(dashboard.quantile(0.95, buckets.map((b) => [...b])) - 0.35) < 1e-12);
  // Beyond the last finite bucket: its upper bound.
  assert.equal(dashboard.quantile(0.99, [[0.1, 10], [Infinity, 20]]), 0.1);
  assert.equal(dashboard.quantile(0.95, [[0.1, 0], [Infinity, 0]]), null);
  assert.equal(dashboard.quantile(0.95, []), null);
});

test('latency quantiles come from bucket increases over the window', () => {
  const before = { 0.005: 100, 0.01: 100, 0.05: 100, '+Inf': 100 };
  const after = { 0.005: 100, 0.01: 180, 0.05: 200, '+Inf': 200 };
  // The window's 100 requests: 80 in (5 ms, 10 ms], 20 in (10 ms, 50 ms]. The older 100 do not count.
  const v = view(scrape({ requests: 100, buckets: before }), scrape({ requests: 200, buckets: after }));
  assert.ok(Math.abs(v['latency-p95'] - (0.01 + 0.04 * 15 / 20)) < 1e-12);
  assert.equal(v.routes[0]['route-latency-p95'], v['latency-p95']);
});

test('absent metrics are null, shown as a dash, as without the cache profile', () => {
  const plain = 'http_server_requests_seconds_count{method="GET",status="200",uri="/api/concerts"} 5\n';
  const v = view(plain, plain);
  for (const metric of ['hit-ratio-overall', 'hit-ratio-l1', 'db-loads-rate', 'l2-errors-rate', 'lettuce-rate',
    'breaker-state', 'hikari-pending', 'latency-p95']) {
    assert.equal(v[metric], null, metric);
  }
  assert.equal(v['requests-rate'], 0);
  assert.equal(dashboard.format(null, 'ratio'), '\u2013');
  assert.equal(dashboard.format(0, 'rate'), '0 /s');
});

test('formats ratios, rates, latencies and counts', () => {
  assert.equal(dashboard.format(0.9734, 'ratio'), '97.3 %');
  assert.equal(dashboard.format(1234.4, 'rate'), '1,234 /s');
  assert.equal(dashboard.format(12.34, 'rate'), '12.3 /s');
  assert.equal(dashboard.format(0.0042, 'seconds'), '4.20 ms');
  assert.equal(dashboard.format(0.25, 'seconds'), '250 ms');
  assert.equal(dashboard.format(1.5, 'seconds'), '1.50 s');
  assert.equal(dashboard.format(12345, 'count'), '12,345');
  assert.equal(dashboard.format('half_open', 'text'), 'half open');
  assert.equal(dashboard.level('breaker-state', 'open'), 'bad');
  assert.equal(dashboard.level('breaker-state', 'metrics_only'), 'ok');
  assert.equal(dashboard.level('breaker-state', 'half_open'), 'warn');
});

/** The capture's meters as Micrometer exposes them (ADR 0033). */
function captureScrape({ events = 0, lag = {}, reconnects = 0, lost = 0, leader = 1, behind = 0 }) {
  const lines = [
    `tiered_cache_feed_behind_reads_total{cache="concert"} ${behind}`,
    'tiered_cache_feed_behind_reads_total{cache="schedules"} 0.0',
    `concert_cache_capture_events_total{table="concert",type="update"} ${events}`,
    'concert_cache_capture_events_total{table="schedule",type="insert"} 0.0',
    `concert_cache_capture_reconnects_total ${reconnects}`,
    `concert_cache_capture_position_lost_total{reason="position-gone"} ${lost}`,
    `concert_cache_capture_leader ${leader}`,
  ];
  for (const [le, count] of Object.entries(lag)) {
    lines.push(`concert_cache_capture_lag_seconds_bucket{le="${le}"} ${count}`);
  }
  return scrape({}) + lines.join('\n') + '\n';
}

test('capture figures: row changes per second, lag quantiles, reconnects and lost positions over the window', () => {
  const v = view(captureScrape({ events: 10, lag: { '0.1': 0, '0.5': 0, '1.0': 0, '+Inf': 0 }, reconnects: 1 }),
    captureScrape({ events: 30, lag: { '0.1': 50, '0.5': 90, '1.0': 100, '+Inf': 100 }, reconnects: 3, lost: 1 }));
  assert.equal(v['capture-events-rate'], 10);
  assert.equal(v['capture-lag-p50'], 0.1);
  assert.ok(Math.abs(v['capture-lag-p99'] - 0.95) < 1e-9);
  assert.equal(v['capture-reconnects'], 2);
  assert.equal(v['capture-position-lost'], 1);
  assert.equal(v['capture-leader'], 'reads the binlog');
  assert.equal(dashboard.level('capture-position-lost', 1), 'bad');
});

test('reads past both tiers while the reader had not confirmed: a rate over the window, a warning when any', () => {
  const v = view(captureScrape({ behind: 4 }), captureScrape({ behind: 44 }));
  assert.equal(v['feed-behind-rate'], 20);
  assert.equal(v['feed-behind'], 40);
  assert.equal(dashboard.level('feed-behind-rate', 20), 'warn');
  assert.equal(dashboard.level('feed-behind-rate', 0), null);
});

test('capture figures are absent with capture off, and a standby instance says so', () => {
  const off = view(scrape({}), scrape({}));
  for (const metric of ['capture-leader', 'capture-events-rate', 'capture-lag-p99', 'capture-reconnects',
    'feed-behind-rate']) {
    assert.equal(off[metric], null, metric);
  }
  assert.equal(view(captureScrape({ leader: 0 }), captureScrape({ leader: 0 }))['capture-leader'], 'standby');
});
