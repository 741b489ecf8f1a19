/*
 * concert-cache built-in dashboard (ADR 0110).
 *
 * Polls the Prometheus endpoint of the management server that serves this page every 2 s, keeps the last
 * 5 minutes of samples in this tab, and shows hit ratios, request rates, latency quantiles, database loads,
 * the Redis tier's state and the change capture from the binary log (ADR 0033). Counters become numbers the way PromQL's increase() makes them: the difference
 * between two samples, a drop meaning the application restarted and counted again from zero.
 *
 * The first half has no DOM access: parsing, counter increases, derived numbers, quantiles and formatting.
 * Node loads it for ops/dashboard/dashboard-logic.test.js; the browser runs start() as well.
 */
(function (global) {
  'use strict';

  const POLL_MS = 2000;
  const HISTORY_MS = 5 * 60 * 1000;
  const BREAKER = 'tiered-cache-redis';
  /** Requests to the management server itself (this page, its polls) are not API traffic. */
  const MANAGEMENT_URI = /^\/(?:actuator|dashboard)(?:\/|$)/;
  const SEP = '\u001f';
  const ABSENT = '\u2013';

  const WANTED = new Set([
    'tiered_cache_gets_total',
    'tiered_cache_loads_seconds_count',
    'tiered_cache_errors_total',
    'tiered_cache_stale_served_total',
    'http_server_requests_seconds_count',
    'http_server_requests_seconds_bucket',
    'hikaricp_connections_pending',
    'hikaricp_connections_active',
    'hikaricp_connections_max',
    'resilience4j_circuitbreaker_state',
    'lettuce_seconds_count',
    'concert_cache_capture_events_total',
    'concert_cache_capture_lag_seconds_bucket',
    'concert_cache_capture_reconnects_total',
    'concert_cache_capture_position_lost_total',
    'concert_cache_capture_leader',
    'tiered_cache_feed_behind_reads_total',
  ]);

  /** Numbers plotted for every poll, one sparkline each (latency has two lines in one). */
  const SERIES = [
    'hit-ratio-overall', 'hit-ratio-l1', 'hit-ratio-l2', 'db-loads-rate', 'requests-rate', 'latency-p95',
    'latency-p99', 'errors-5xx-rate', 'hikari-pending', 'l2-errors-rate', 'lettuce-rate', 'stale-served-rate',
    'capture-events-rate', 'capture-lag-p50', 'capture-lag-p99', 'feed-behind-rate',
  ];

  // ---- Text exposition format (version 0.0.4) ----------------------------------------------------------

  function parseValue(text) {
    switch (text) {
      case '+Inf': return Infinity;
      case '-Inf': return -Infinity;
      case 'NaN': return NaN;
      default: return Number(text);
    }
  }

  /** Reads the label set starting after '{' into labels; returns the index after '}', or -1 if malformed. */
  function parseLabels(line, start, labels) {
    let i = start;
    const n = line.length;
    while (i < n) {
      while (i < n && (line[i] === ',' || line[i] === ' ')) {
        i++;
      }
      if (line[i] === '}') {
        return i + 1;
      }
      const eq = line.indexOf('=', i);
      if (eq < 0 || line[eq + 1] !== '"') {
        return -1;
      }
      const key = line.slice(i, eq).trim();
      let j = eq + 2;
      let value = '';
      for (;;) {
        const quote = line.indexOf('"', j);
        const backslash = line.indexOf('\\', j);
        if (quote < 0) {
          return -1;
        }
        if (backslash >= 0 && backslash < quote) {
          const escaped = line[backslash + 1];
          value += line.slice(j, backslash) + (escaped === 'n' ? '\n' : escaped);
          j = backslash + 2;
        }
        else {
          value += line.slice(j, quote);
          j = quote + 1;
          break;
        }
      }
      labels[key] = value;
      i = j;
    }
    return -1;
  }

  /**
   * Calls sample(name, labels, value) for every sample line whose metric name wanted(name) accepts;
   * comments, blank and malformed lines are skipped.
   */
  function parseExposition(text, wanted, sample) {
    for (const raw of text.split('\n')) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '' || line[0] === '#') {
        continue;
      }
      let i = 0;
      while (i < line.length && line[i] !== '{' && line[i] !== ' ' && line[i] !== '\t') {
        i++;
      }
      const name = line.slice(0, i);
      if (!wanted(name)) {
        continue;
      }
      const labels = {};
      if (line[i] === '{') {
        i = parseLabels(line, i + 1, labels);
        if (i < 0) {
          continue;
        }
      }
      const rest = line.slice(i).trim().split(/\s+/);
      sample(name, labels, parseValue(rest[0]));
    }
  }

  // ---- Snapshots: one poll, reduced to the sums the dashboard needs ------------------------------------

  function key(...parts) {
    return parts.join(SEP);
  }

  function add(map, k, value) {
    map.set(k, (map.get(k) || 0) + value);
  }

  function route(labels) {
    return labels.method ? labels.method + ' ' + labels.uri : String(labels.uri);
  }

  /**
   * Reduces one scrape to counters (summed over the labels the dashboard does not show), gauges, the
   * breaker's current state and the set of metric groups that were present at all.
   */
  function snapshot(text, time) {
    const snap = { time, counters: new Map(), gauges: new Map(), breaker: null, captureLeader: false,
      present: new Set() };
    const counters = snap.counters;
    parseExposition(text, (name) => WANTED.has(name), (name, l, value) => {
      if (Number.isNaN(value)) {
        return;
      }
      switch (name) {
        case 'tiered_cache_gets_total':
          add(counters, key('gets', l.cache, l.tier, l.result), value);
          snap.present.add('tiered').add(l.tier);
          break;
        case 'tiered_cache_loads_seconds_count':
          add(counters, key('loads', l.cache, l.result), value);
          snap.present.add('tiered');
          break;
        case 'tiered_cache_errors_total':
          add(counters, key('errors', l.cache), value);
          snap.present.add('tiered');
          break;
        case 'tiered_cache_stale_served_total':
          add(counters, key('stale', l.cache), value);
          snap.present.add('tiered');
          break;
        case 'http_server_requests_seconds_count':
          add(counters, key('requests', route(l)), value);
          if (/^5/.test(l.status || '')) {
            add(counters, key('5xx', route(l)), value);
          }
          snap.present.add('http');
          break;
        case 'http_server_requests_seconds_bucket':
          add(counters, key('bucket', route(l), l.le), value);
          break;
        case 'lettuce_seconds_count':
          add(counters, key('lettuce'), value);
          snap.present.add('lettuce');
          break;
        case 'concert_cache_capture_events_total':
          add(counters, key('capture-events'), value);
          snap.present.add('capture');
          break;
        case 'concert_cache_capture_lag_seconds_bucket':
          add(counters, key('capture-bucket', l.le), value);
          snap.present.add('capture');
          break;
        case 'concert_cache_capture_reconnects_total':
          add(counters, key('capture-reconnects'), value);
          snap.present.add('capture');
          break;
        case 'concert_cache_capture_position_lost_total':
          add(counters, key('capture-position-lost'), value);
          snap.present.add('capture');
          break;
        case 'concert_cache_capture_leader':
          snap.captureLeader = value === 1;
          snap.present.add('capture');
          break;
        case 'tiered_cache_feed_behind_reads_total':
          add(counters, key('feed-behind'), value);
          break;
        case 'resilience4j_circuitbreaker_state':
          if (l.name === BREAKER) {
            snap.present.add('breaker');
            if (value === 1) {
              snap.breaker = l.state;
            }
          }
          break;
        default: // hikaricp_connections_{pending,active,max}, summed over pools
          add(snap.gauges, name.slice('hikaricp_connections_'.length), value);
          snap.present.add('hikari');
      }
    });
    return snap;
  }

  /** Per counter, how much it grew from older to newer; a counter that went down was reset to zero. */
  function increase(older, newer) {
    const out = new Map();
    for (const [k, value] of newer.counters) {
      const before = older.counters.get(k);
      out.set(k, (before === undefined) ? value : (value >= before) ? value - before : value);
    }
    return out;
  }

  function accumulate(total, increments) {
    for (const [k, value] of increments) {
      add(total, k, value);
    }
    return total;
  }

  // ---- Derived numbers ----------------------------------------------------------------------------------

  /**
   * The q-quantile of a histogram given as [upper bound, cumulative count] pairs, interpolated linearly
   * inside the bucket as PromQL's histogram_quantile does; null without observations.
   */
  function quantile(q, buckets) {
    const sorted = buckets.filter((b) => !Number.isNaN(b[0])).sort((a, b) => a[0] - b[0]);
    if (sorted.length === 0) {
      return null;
    }
    // Bucket increases from different series can disagree slightly; cumulative counts never go down.
    let running = 0;
    for (const b of sorted) {
      running = Math.max(running, b[1]);
      b[1] = running;
    }
    const total = sorted[sorted.length - 1][1];
    if (!(total > 0)) {
      return null;
    }
    const rank = q * total;
    let lower = 0;
    let below = 0;
    for (const [le, count] of sorted) {
      if (count >= rank) {
        if (le === Infinity) {
          return lower;
        }
        if (count === below) {
          return le;
        }
        return lower + (le - lower) * (rank - below) / (count - below);
      }
      lower = le;
      below = count;
    }
    return lower;
  }

  function ratio(numerator, denominator) {
    return (denominator > 0) ? numerator / denominator : null;
  }

  /**
   * Overall hit ratio: (L1 hits + L2 hits) / (L1 hits + L1 misses). Without L1 lookups (the redis-only
   * mode) every read starts at L2, so the ratio is L2 hits / L2 lookups.
   */
  function overallRatio(c) {
    const l1 = c.l1hit + c.l1miss;
    return (l1 > 0) ? (c.l1hit + c.l2hit) / l1 : ratio(c.l2hit, c.l2hit + c.l2miss);
  }

  function emptyCache(name) {
    return { name, l1hit: 0, l1miss: 0, l2hit: 0, l2miss: 0, loads: 0, failures: 0, stale: 0 };
  }

  function emptyRoute(name) {
    return { name, requests: 0, errors: 0, buckets: [] };
  }

  /**
   * The dashboard's numbers from counter increases over `seconds`, and the gauges of `snap`, the newest
   * sample. null means "no data": the metric is absent, or there was nothing to divide by.
   */
  function derive(increments, seconds, snap) {
    const caches = new Map();
    const routes = new Map();
    const cacheOf = (name) => caches.get(name) || caches.set(name, emptyCache(name)).get(name);
    const routeOf = (name) => routes.get(name) || routes.set(name, emptyRoute(name)).get(name);
    let errors = 0;
    let lettuce = 0;
    const capture = { events: 0, reconnects: 0, lost: 0, buckets: [], behind: 0 };
    for (const [k, value] of increments) {
      const p = k.split(SEP);
      switch (p[0]) {
        case 'gets':
          if ((p[2] === 'l1' || p[2] === 'l2') && (p[3] === 'hit' || p[3] === 'miss')) {
            cacheOf(p[1])[p[2] + p[3]] += value;
          }
          break;
        case 'loads':
          cacheOf(p[1]).loads += value;
          if (p[2] === 'failure') {
            cacheOf(p[1]).failures += value;
          }
          break;
        case 'stale':
          cacheOf(p[1]).stale += value;
          break;
        case 'errors':
          errors += value;
          break;
        case 'requests':
          routeOf(p[1]).requests += value;
          break;
        case '5xx':
          routeOf(p[1]).errors += value;
          break;
        case 'bucket':
          routeOf(p[1]).buckets.push([parseValue(p[2]), value]);
          break;
        case 'lettuce':
          lettuce += value;
          break;
        case 'capture-events':
          capture.events += value;
          break;
        case 'capture-bucket':
          capture.buckets.push([parseValue(p[1]), value]);
          break;
        case 'capture-reconnects':
          capture.reconnects += value;
          break;
        case 'capture-position-lost':
          capture.lost += value;
          break;
        case 'feed-behind':
          capture.behind += value;
          break;
        default:
      }
    }
    const rate = (count) => (seconds > 0) ? count / seconds : null;
    const tiered = snap.present.has('tiered');
    const http = snap.present.has('http');
    const sum = emptyCache('*');
    for (const c of caches.values()) {
      for (const field of ['l1hit', 'l1miss', 'l2hit', 'l2miss', 'loads', 'failures', 'stale']) {
        sum[field] += c[field];
      }
    }
    const api = [...routes.values()].filter((r) => !MANAGEMENT_URI.test(r.name.slice(r.name.indexOf(' ') + 1)));
    const apiBuckets = new Map();
    for (const r of api) {
      for (const [le, count] of r.buckets) {
        apiBuckets.set(le, (apiBuckets.get(le) || 0) + count);
      }
    }
    const merged = [...apiBuckets];
    const apiRequests = api.reduce((total, r) => total + r.requests, 0);
    const apiErrors = api.reduce((total, r) => total + r.errors, 0);
    const gauge = (name) => snap.gauges.has(name) ? snap.gauges.get(name) : null;
    const captured = snap.present.has('capture');
    return {
      'seconds': seconds,
      'hit-ratio-overall': tiered ? overallRatio(sum) : null,
      'hit-ratio-l1': tiered ? ratio(sum.l1hit, sum.l1hit + sum.l1miss) : null,
      'hit-ratio-l2': tiered ? ratio(sum.l2hit, sum.l2hit + sum.l2miss) : null,
      'db-loads-rate': tiered ? rate(sum.loads) : null,
      'db-load-failures-rate': tiered ? rate(sum.failures) : null,
      'stale-served-rate': tiered ? rate(sum.stale) : null,
      'stale-served': tiered ? sum.stale : null,
      'l2-errors-rate': tiered ? rate(errors) : null,
      'l2-errors': tiered ? errors : null,
      'lettuce-rate': snap.present.has('lettuce') ? rate(lettuce) : null,
      'lettuce': snap.present.has('lettuce') ? lettuce : null,
      'requests-rate': http ? rate(apiRequests) : null,
      'requests': http ? apiRequests : null,
      'errors-5xx-rate': http ? rate(apiErrors) : null,
      'errors-5xx': http ? apiErrors : null,
      'latency-p95': quantile(0.95, merged),
      'latency-p99': quantile(0.99, merged),
      'hikari-pending': gauge('pending'),
      'hikari-active': gauge('active'),
      'hikari-max': gauge('max'),
      'breaker-state': snap.present.has('breaker') ? (snap.breaker || 'unknown') : null,
      'capture-leader': captured ? (snap.captureLeader ? 'reads the binlog' : 'standby') : null,
      'capture-events-rate': captured ? rate(capture.events) : null,
      'capture-events': captured ? capture.events : null,
      'capture-lag-p50': quantile(0.5, capture.buckets),
      'capture-lag-p99': quantile(0.99, capture.buckets),
      'capture-reconnects': captured ? capture.reconnects : null,
      'capture-position-lost': captured ? capture.lost : null,
      // Reads past both tiers while the reader had not confirmed recently (ADR 0039).
      'feed-behind-rate': captured ? rate(capture.behind) : null,
      'feed-behind': captured ? capture.behind : null,
      'caches': [...caches.values()].sort((a, b) => a.name.localeCompare(b.name)).map((c) => ({
        'name': c.name,
        'cache-lookups-rate': rate((c.l1hit + c.l1miss > 0) ? c.l1hit + c.l1miss : c.l2hit + c.l2miss),
        'cache-hit-ratio-l1': ratio(c.l1hit, c.l1hit + c.l1miss),
        'cache-hit-ratio-l2': ratio(c.l2hit, c.l2hit + c.l2miss),
        'cache-hit-ratio-overall': overallRatio(c),
        'cache-db-loads-rate': rate(c.loads),
        'cache-stale-served-rate': rate(c.stale),
      })),
      'routes': api.map((r) => ({
        'name': r.name,
        'route-requests-rate': rate(r.requests),
        'route-requests': r.requests,
        'route-latency-p95': quantile(0.95, r.buckets),
        'route-latency-p99': quantile(0.99, r.buckets),
        'route-errors-5xx-rate': rate(r.errors),
      })),
    };
  }

  // ---- Formatting ---------------------------------------------------------------------------------------

  function fixed(value, digits) {
    return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }

  /** The text for a value of the given unit ("ratio", "rate", "seconds", "count", "text"); "–" for null. */
  function format(value, unit) {
    if (value === null || value === undefined || (typeof value === 'number' && !Number.isFinite(value))) {
      return ABSENT;
    }
    switch (unit) {
      case 'ratio':
        return fixed(value * 100, 1) + ' %';
      case 'rate':
        if (value === 0) {
          return '0 /s';
        }
        return fixed(value, (value >= 100) ? 0 : (value >= 10) ? 1 : 2) + ' /s';
      case 'seconds': {
        const ms = value * 1000;
        if (ms >= 1000) {
          return fixed(value, 2) + ' s';
        }
        return fixed(ms, (ms >= 100) ? 0 : (ms >= 10) ? 1 : 2) + ' ms';
      }
      case 'count':
        return fixed(value, 0);
      default:
        return String(value).replace('_', ' ');
    }
  }

  /** A colour hint for values that mean trouble. */
  function level(metric, value) {
    if (value === null || value === undefined) {
      return null;
    }
    switch (metric) {
      case 'breaker-state':
        switch (value) {
          case 'closed':
          case 'metrics_only':
            return 'ok';
          case 'open':
          case 'forced_open':
            return 'bad';
          default: // half_open, disabled, unknown
            return 'warn';
        }
      case 'hikari-pending':
      case 'capture-reconnects':
      case 'feed-behind-rate':
        return (value > 0) ? 'warn' : null;
      case 'capture-position-lost':
        return (value > 0) ? 'bad' : null;
      case 'capture-lag-p99':
        // The freshness contract: every instance serves a committed change within 1 s.
        return (value > 1) ? 'bad' : null;
      case 'l2-errors-rate':
      case 'errors-5xx-rate':
      case 'db-load-failures-rate':
        return (value > 0) ? 'bad' : null;
      default:
        return null;
    }
  }

  // ---- The page -----------------------------------------------------------------------------------------

  function start(document, window) {
    const meta = document.querySelector('meta[name="metrics-path"]');
    const url = new URL((meta && meta.content) || 'actuator/prometheus', window.location.href);
    const state = {
      history: [],
      first: null,
      sinceLoad: new Map(),
      series: new Map(SERIES.map((name) => [name, []])),
      caches: new Map(),
      routes: new Map(),
      windowSeconds: 0,
      plotted: null,
    };
    const select = document.getElementById('window');
    document.getElementById('metrics-url').textContent = url.pathname;
    select.addEventListener('change', () => {
      state.windowSeconds = Number(select.value);
      render(document, state);
    });

    async function poll() {
      const started = Date.now();
      try {
        const response = await fetch(url, {
          cache: 'no-store',
          headers: { Accept: 'text/plain;version=0.0.4;q=1, */*;q=0.1' },
          signal: AbortSignal.timeout(4 * POLL_MS),
        });
        if (!response.ok) {
          throw new Error('HTTP ' + response.status);
        }
        ingest(state, snapshot(await response.text(), Date.now()));
        render(document, state);
        status(document, state, null);
      }
      catch (ex) {
        status(document, state, ex);
      }
      finally {
        window.setTimeout(poll, Math.max(0, POLL_MS - (Date.now() - started)));
      }
    }
    poll();
  }

  function ingest(state, snap) {
    const previous = state.history[state.history.length - 1];
    if (previous) {
      const increments = increase(previous, snap);
      accumulate(state.sinceLoad, increments);
      const view = derive(increments, (snap.time - previous.time) / 1000, snap);
      state.plotted = state.plotted || snap.time;
      for (const name of SERIES) {
        state.series.get(name).push([snap.time, view[name]]);
      }
      record(state.caches, view.caches, 'cache-hit-ratio-overall', snap.time);
      record(state.routes, view.routes, 'route-requests-rate', snap.time);
    }
    else {
      state.first = snap;
    }
    state.history.push(snap);
    const oldest = snap.time - HISTORY_MS;
    // Keep one sample at or before the start of the 5-minute window, so that window can be computed.
    while (state.history.length > 2 && state.history[1].time <= oldest) {
      state.history.shift();
    }
    for (const points of [...state.series.values(), ...state.caches.values(), ...state.routes.values()]) {
      while (points.length > 0 && points[0][0] < oldest) {
        points.shift();
      }
    }
  }

  function record(seriesByName, rows, metric, time) {
    for (const row of rows) {
      if (!seriesByName.has(row.name)) {
        seriesByName.set(row.name, []);
      }
      seriesByName.get(row.name).push([time, row[metric]]);
    }
  }

  /** The numbers over the chosen window (the last poll by default) and since the page was loaded. */
  function views(state) {
    const history = state.history;
    const latest = history[history.length - 1];
    let older = history[history.length - 2];
    if (state.windowSeconds > 0) {
      const target = latest.time - state.windowSeconds * 1000;
      older = history[0];
      for (const snap of history) {
        if (snap.time <= target) {
          older = snap;
        }
      }
    }
    const current = (older && older !== latest) ? derive(increase(older, latest), (latest.time - older.time) / 1000,
        latest) : derive(new Map(), 0, latest);
    const since = derive(state.sinceLoad, (latest.time - state.first.time) / 1000, latest);
    return { current, since };
  }

  function render(document, state) {
    if (state.history.length === 0) {
      return;
    }
    const latest = state.history[state.history.length - 1];
    const { current, since } = views(state);
    for (const output of document.querySelectorAll('output[data-metric]:not([data-row])')) {
      const metric = output.dataset.metric;
      const value = metric.endsWith('-since-load') ? since[metric.slice(0, -'-since-load'.length)] : current[metric];
      show(output, value, metric);
    }
    // The x axis grows with the data until it spans the 5 minutes kept.
    const axis = { from: Math.max(latest.time - HISTORY_MS, state.plotted || latest.time), to: latest.time };
    for (const svg of document.querySelectorAll('svg[data-spark]')) {
      const names = svg.dataset.spark.split(',');
      spark(svg, names.map((name) => state.series.get(name) || []), axis, names[0].startsWith('hit-ratio') ? 1 : 0);
    }
    table(document, 'caches', ['cache-lookups-rate', 'cache-hit-ratio-l1', 'cache-hit-ratio-l2',
      'cache-hit-ratio-overall', 'cache-hit-ratio-overall-since-load', 'cache-db-loads-rate',
      'cache-stale-served-rate'], current.caches, since.caches, state.caches, axis, 1);
    // Routes only once requested since load: writes or 404s from before the page opened are noise here.
    table(document, 'routes', ['route-requests-rate', 'route-latency-p95', 'route-latency-p99',
      'route-errors-5xx-rate', 'route-requests-since-load'], current.routes,
      since.routes.filter((row) => row['route-requests'] > 0), state.routes, axis, 0);
    const tiered = latest.present.has('tiered');
    document.body.dataset.tiered = tiered ? 'present' : 'absent';
    document.getElementById('tiered-note').textContent = !tiered
      ? 'no tiered_cache metrics: the API runs without the cache profile'
      : latest.present.has('l1') ? 'L1 Caffeine, L2 Redis' : 'Redis only: no L1 tier';
    document.body.dataset.capture = latest.present.has('capture') ? 'present' : 'absent';
  }

  const UNITS = { ratio: /hit-ratio/, rate: /-rate$/, seconds: /latency/, count: /requests-since-load$/ };

  function unitOf(metric) {
    for (const [unit, pattern] of Object.entries(UNITS)) {
      if (pattern.test(metric)) {
        return unit;
      }
    }
    return 'count';
  }

  function show(output, value, metric) {
    const unit = output.dataset.unit || unitOf(metric);
    output.textContent = format(value, unit);
    output.dataset.value = (value === null || value === undefined) ? '' : String(value);
    output.dataset.state = (value === null || value === undefined) ? 'absent' : 'present';
    const hint = level(metric, value);
    if (hint) {
      output.dataset.level = hint;
    }
    else {
      delete output.dataset.level;
    }
  }

  /** Rebuilds a table body: one row per cache or route seen since load, numbers over the window. */
  function table(document, id, metrics, currentRows, sinceRows, seriesByName, axis, ratioMax) {
    const body = document.getElementById(id);
    const current = new Map(currentRows.map((row) => [row.name, row]));
    const since = new Map(sinceRows.map((row) => [row.name, row]));
    const names = [...since.keys()];
    if (id === 'routes') {
      names.sort((a, b) => since.get(b)['route-requests'] - since.get(a)['route-requests']);
    }
    const rows = [];
    for (const name of names) {
      const tr = document.createElement('tr');
      tr.dataset.name = name;
      const label = document.createElement('td');
      label.textContent = name;
      tr.append(label);
      for (const metric of metrics) {
        const td = document.createElement('td');
        const output = document.createElement('output');
        output.dataset.metric = metric;
        output.dataset.row = name;
        output.dataset[(id === 'caches') ? 'cache' : 'route'] = name;
        const value = metric.endsWith('-since-load')
          ? (since.get(name) || {})[metric.slice(0, -'-since-load'.length)]
          : (current.get(name) || {})[metric];
        show(output, (value === undefined) ? null : value, metric);
        td.append(output);
        tr.append(td);
      }
      const trend = document.createElement('td');
      const svg = document.getElementById('spark-template').content.firstElementChild.cloneNode(true);
      svg.dataset.row = name;
      spark(svg, [seriesByName.get(name) || []], axis, ratioMax);
      trend.append(svg);
      tr.append(trend);
      rows.push(tr);
    }
    if (rows.length > 0) {
      body.replaceChildren(...rows);
    }
    else if (!body.querySelector('.empty')) {
      const tr = document.createElement('tr');
      const td = document.createElement('td');
      tr.className = 'empty';
      td.colSpan = metrics.length + 2;
      td.textContent = ABSENT;
      tr.append(td);
      body.replaceChildren(tr);
    }
  }

  /** Draws each series as one path over the axis' time span, with gaps where a value was null. */
  function spark(svg, seriesList, axis, fixedMax) {
    const box = svg.viewBox.baseVal;
    const width = box.width;
    const height = box.height;
    let max = fixedMax;
    if (!max) {
      for (const points of seriesList) {
        for (const [, value] of points) {
          if (Number.isFinite(value) && value > max) {
            max = value;
          }
        }
      }
      max = (max > 0) ? max * 1.1 : 1;
    }
    const span = Math.max(axis.to - axis.from, 2 * POLL_MS);
    const paths = svg.querySelectorAll('path');
    let drawn = 0;
    seriesList.forEach((points, index) => {
      let d = '';
      let pen = false;
      let count = 0;
      for (const [time, value] of points) {
        if (!Number.isFinite(value)) {
          pen = false;
          continue;
        }
        const x = width - (axis.to - time) / span * width;
        const y = height - 1 - Math.min(value / max, 1) * (height - 2);
        d += (pen ? 'L' : 'M') + x.toFixed(1) + ' ' + y.toFixed(1);
        pen = true;
        count++;
      }
      if (paths[index]) {
        paths[index].setAttribute('d', d);
      }
      drawn = Math.max(drawn, count);
    });
    svg.dataset.points = String(drawn);
    svg.dataset.max = String(max);
  }

  function status(document, state, error) {
    const body = document.body;
    const text = document.getElementById('status');
    if (error) {
      body.dataset.status = 'error';
      text.textContent = 'metrics unavailable (' + (error.message || error) + '), retrying every 2 s';
      return;
    }
    const history = state.history;
    const span = Math.round((history[history.length - 1].time - history[0].time) / 1000);
    body.dataset.status = 'ok';
    body.dataset.samples = String(history.length);
    text.textContent = history.length + ' samples over ' + span + ' s, updated '
      + new Date(history[history.length - 1].time).toLocaleTimeString('en-GB');
  }

  const api = { parseExposition, snapshot, increase, accumulate, quantile, overallRatio, derive, format, level };
  if (typeof module === 'object' && module.exports) {
    module.exports = api;
  }
  else {
    global.ConcertCacheDashboard = api;
  }
  if (typeof document !== 'undefined' && document.getElementById('status')) {
    start(document, global);
  }
}(typeof window !== 'undefined' ? window : globalThis));
