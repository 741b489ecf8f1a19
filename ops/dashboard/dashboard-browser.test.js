// The built-in dashboard in a real headless Chromium (Debian's package), while this test drives reads against
// the API: the numbers must move, the page must reach no other host, and a screenshot is saved.
//
//   DASHBOARD_URL  the page on the management port   (default http://127.0.0.1:8081/dashboard)
//   API_URL        the public API                     (default http://127.0.0.1:8080)
//   SCREENSHOT     where to save the screenshot       (default ops/dashboard/screenshot.png)
//   EXPECT_CACHE   true: the cache profile must be on; false: it must be off; unset: whatever the API exposes
//   CHROMIUM       the browser                        (default /usr/bin/chromium)
//   REQUESTS, LOAD_SECONDS   reads to send and over how long (default 500 over 8 s)
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const DASHBOARD_URL = process.env.DASHBOARD_URL || 'http://127.0.0.1:8081/dashboard';
const API_URL = (process.env.API_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const SCREENSHOT = path.resolve(process.env.SCREENSHOT || path.join(__dirname, 'screenshot.png'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const EXPECT_CACHE = { true: true, 1: true, false: false, 0: false }[process.env.EXPECT_CACHE ?? ''];
const REQUESTS = Number(process.env.REQUESTS || 500);
const LOAD_SECONDS = Number(process.env.LOAD_SECONDS || 8);
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// Bounded: about 15 s with the defaults; a longer LOAD_SECONDS (for a screenshot) extends the limit.
const TIMEOUT = Math.max(60_000, (LOAD_SECONDS + 40) * 1000);

test('dashboard shows live numbers while the API serves reads', { timeout: TIMEOUT }, async (t) => {
  const targets = await preflight();
  const launched = Date.now();
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'concert-cache-dashboard-'));
  const browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 960 },
    timeout: 20_000,
  });
  t.after(async () => {
    await browser.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  });
  const page = browser.pages()[0] || await browser.newPage();
  t.diagnostic(`chromium started in ${Date.now() - launched} ms`);
  const origin = new URL(DASHBOARD_URL).origin;
  const foreign = [];
  const problems = [];
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && new URL(url).origin !== origin) {
      foreign.push(url);
    }
  });
  page.on('pageerror', (error) => problems.push(String(error)));
  page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));

  const opened = Date.now();
  const response = await page.goto(DASHBOARD_URL, { waitUntil: 'load', timeout: 10_000 });
  assert.equal(response.status(), 200);
  await page.waitForSelector('body[data-status="ok"]', { timeout: 10_000 });
  await installHelpers(page);
  t.diagnostic(`page loaded and first sample shown in ${Date.now() - opened} ms`);
  const before = await number(page, 'requests-since-load');

  const loadStarted = Date.now();
  const load = drive(targets, REQUESTS, LOAD_SECONDS * 1000);
  let sent;
  try {
    await waitFor(page, 'requests rate above 0', () => __value('requests-rate') > 0, LOAD_SECONDS + 4);
    await waitFor(page, 'a latency p95', () => __value('latency-p95') > 0, LOAD_SECONDS + 4);
    await waitFor(page, 'a sparkline with points', () => __spark('requests-rate') >= 2, LOAD_SECONDS + 4);
    await waitFor(page, 'a row for the schedules route',
        () => !!document.querySelector('output[data-route="GET /api/concerts/{concertId}/schedules"]'), 4);
    const tiered = await page.evaluate(() => document.body.dataset.tiered);
    if (EXPECT_CACHE !== undefined) {
      assert.equal(tiered, EXPECT_CACHE ? 'present' : 'absent', 'tiered_cache metrics vs EXPECT_CACHE');
    }
    if (tiered === 'present') {
      await waitFor(page, 'an overall hit ratio between 0 and 100 %', () => {
        const output = document.getElementById('hit-ratio-overall');
        const ratio = output.dataset.value === '' ? NaN : Number(output.dataset.value);
        return ratio >= 0 && ratio <= 1 && / %$/.test(output.textContent);
      }, LOAD_SECONDS + 4);
      await waitFor(page, 'a hit ratio per cache', () => [...document.querySelectorAll(
          '#caches output[data-metric="cache-hit-ratio-overall"]')].some((o) => o.dataset.value !== ''), 4);
      await waitFor(page, 'a sparkline of the hit ratio', () => __spark('hit-ratio-overall') >= 1, 4);
    }
    else {
      for (const metric of ['hit-ratio-overall', 'hit-ratio-l1', 'hit-ratio-l2', 'db-loads-rate']) {
        assert.equal(await text(page, metric), '\u2013', `${metric} without tiered_cache metrics`);
      }
    }
    // The screenshot shows the page late in the load, with a few samples drawn.
    const late = loadStarted + (LOAD_SECONDS - 1) * 1000 - Date.now();
    if (late > 0) {
      await new Promise((resolve) => setTimeout(resolve, late));
    }
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  }
  finally {
    sent = await load;
  }
  t.diagnostic(`sent ${sent.ok} reads (${sent.failed} failed) in ${sent.seconds.toFixed(1)} s`);
  assert.equal(sent.failed, 0, `reads that failed: ${JSON.stringify(sent.failures.slice(0, 5))}`);
  // Every read this test sent shows up in the count since the page was loaded, at the next poll.
  await waitFor(page, `at least ${before + sent.ok} requests since load`,
      (expected) => __value('requests-since-load') >= expected, 6, before + sent.ok);
  if (await page.evaluate(() => document.body.dataset.tiered) === 'present') {
    const sinceLoad = await number(page, 'hit-ratio-overall-since-load');
    assert.ok(sinceLoad > 0 && sinceLoad <= 1, `hit ratio since load ${sinceLoad}`);
  }
  // A longer window still covers the load after it ended.
  await page.selectOption('#window', '60');
  await waitFor(page, 'a request rate over the last minute', () => __value('requests-rate') > 0, 3);
  const shown = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll(
      'output[data-metric]:not([data-row])')].map((o) => [o.dataset.metric, o.textContent])));
  t.diagnostic(`shown: ${JSON.stringify(shown)}`);
  t.diagnostic(`screenshot: ${SCREENSHOT}`);
  assert.deepEqual(foreign, [], 'requests to another origin');
  assert.deepEqual(problems, [], 'errors in the page');
});

/** Checks both servers answer and collects the concert ids and cursors the reads will use. */
async function preflight() {
  const dashboard = await fetch(DASHBOARD_URL).catch((error) => {
    throw new Error(`dashboard not reachable at ${DASHBOARD_URL} (set DASHBOARD_URL): ${error.cause ?? error}`);
  });
  assert.equal(dashboard.status, 200, `GET ${DASHBOARD_URL}`);
  const ids = [];
  const cursors = [];
  let cursor = null;
  for (let i = 0; i < 3; i++) {
    const url = `${API_URL}/api/concerts?size=50` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : '');
    const response = await fetch(url).catch((error) => {
      throw new Error(`API not reachable at ${API_URL} (set API_URL): ${error.cause ?? error}`);
    });
    assert.equal(response.status, 200, `GET ${url}`);
    const page = await response.json();
    ids.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
    if (!cursor) {
      break;
    }
    cursors.push(cursor);
  }
  assert.ok(ids.length > 0, 'the API has no concerts: generate data first (profile generate)');
  return { ids, cursors };
}

/**
 * Sends `total` GETs spread evenly over `durationMs` from 8 concurrent workers: list pages, and the schedules
 * and details of a skewed set of concerts, so some ids repeat (cache hits) and some do not (misses).
 */
async function drive({ ids, cursors }, total, durationMs) {
  const paths = [];
  for (let i = 0; i < total; i++) {
    const id = ids[Math.floor(ids.length * ((i * 0.618034) % 1) ** 3)];
    switch (i % 5) {
      case 0:
        paths.push(i % 10 === 0 || cursors.length === 0 ? '/api/concerts?size=20'
          : `/api/concerts?size=50&cursor=${encodeURIComponent(cursors[(i / 5) % cursors.length | 0])}`);
        break;
      case 4:
        paths.push(`/api/concerts/${id}`);
        break;
      default:
        paths.push(`/api/concerts/${id}/schedules`);
    }
  }
  const started = Date.now();
  const result = { ok: 0, failed: 0, failures: [], seconds: 0 };
  let next = 0;
  async function worker() {
    while (next < paths.length) {
      const index = next++;
      const due = started + index * durationMs / paths.length;
      if (due > Date.now()) {
        await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      }
      try {
        const response = await fetch(API_URL + paths[index]);
        await response.arrayBuffer();
        if (response.ok) {
          result.ok++;
        }
        else {
          result.failed++;
          result.failures.push(`${paths[index]}: ${response.status}`);
        }
      }
      catch (error) {
        result.failed++;
        result.failures.push(`${paths[index]}: ${error.cause ?? error}`);
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker));
  result.seconds = (Date.now() - started) / 1000;
  return result;
}

/** Waits until predicate, run in the page with __value(id) and __spark(name) at hand, holds. */
async function waitFor(page, what, predicate, seconds, arg) {
  try {
    await page.waitForFunction(predicate, arg, { timeout: seconds * 1000, polling: 200 });
  }
  catch (error) {
    const status = await page.evaluate(() => document.getElementById('status').textContent).catch(() => '?');
    throw new Error(`dashboard never showed ${what} within ${seconds} s (status: ${status})`, { cause: error });
  }
}

/** Defines the helpers the predicates use: an output's raw value (NaN for "–") and a sparkline's points. */
async function installHelpers(page) {
  await page.evaluate(() => {
    window.__value = (id) => {
      const v = document.getElementById(id).dataset.value;
      return (v === '' || v === undefined) ? NaN : Number(v);
    };
    window.__spark = (name) => Number(document.querySelector(`svg[data-spark^="${name}"]`).dataset.points || 0);
  });
}

async function number(page, id) {
  return page.evaluate((key) => {
    const v = document.getElementById(key).dataset.value;
    return v === '' || v === undefined ? NaN : Number(v);
  }, id).then((v) => (Number.isNaN(v) ? 0 : v));
}

async function text(page, id) {
  return page.evaluate((key) => document.getElementById(key).textContent, id);
}
