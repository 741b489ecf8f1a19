// Load shapes and SLO thresholds shared by the scenarios. Environment variables override the
// defaults; SMOKE=1 shrinks every shape to a few seconds at a low rate (CI).

export const SMOKE = __ENV.SMOKE === '1' || __ENV.SMOKE === 'true';

// Every scenario names its main executor "load", so reports find its metrics the same way everywhere.
export const LOAD = 'load';

// WINDOW_SECONDS=W (run.sh --fault primary-kill on a fleet): every request is tagged window=<epoch seconds of
// the start of its W-second window>, and the summary gets the load's requests, failures and p99 per window
// (lib/fleet.py failover lines them up with the fault's log). Absolute windows, because the load starts after
// setup's cursor walk, whose length the init code cannot know.
export const WINDOW_SECONDS = __ENV.WINDOW_SECONDS ? envInt('WINDOW_SECONDS', 5) : 0;
// Windows from init on, this long: the run plus a margin for setup (an empty window's thresholds pass).
const WINDOW_MARGIN_SECONDS = 120;

// The window tag of a request sent now ('' without WINDOW_SECONDS).
export function windowTag() {
  return WINDOW_SECONDS ? String(Math.floor(Date.now() / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS) : '';
}

// Thresholds that never fail, one per window and metric, so that k6's summary holds each window's figures.
export function windowThresholds(total) {
  if (!WINDOW_SECONDS) {
    return {};
  }
  // Failed reads (the load) and failed writes (run.sh --writes) over the whole run, apart.
  const thresholds = {
    [`http_req_failed{scenario:${LOAD}}`]: ['rate>=0'],
    'http_req_failed{scenario:writes}': ['rate>=0'],
  };
  const first = Math.floor(Date.now() / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
  const last = first + seconds(total) + WINDOW_MARGIN_SECONDS;
  for (let window = first; window <= last; window += WINDOW_SECONDS) {
    thresholds[`http_req_duration{scenario:${LOAD},window:${window}}`] = ['max>=0'];
    thresholds[`http_req_failed{scenario:${LOAD},window:${window}}`] = ['rate>=0'];
  }
  return thresholds;
}

const TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'];

export function duration(fallback) {
  return __ENV.DURATION || (SMOKE ? '5s' : fallback);
}

export function rate(fallback) {
  return envInt('RATE', SMOKE ? 10 : fallback);
}

// VUs an arrival-rate scenario sets up before it starts; a smoke run needs few. PRE_ALLOCATED_VUS
// overrides (run.sh --freshness splits the load between two k6 processes).
export function preAllocatedVUs(fallback) {
  return envInt('PRE_ALLOCATED_VUS', SMOKE ? 20 : fallback);
}

export function vus(fallback) {
  return envInt('VUS', SMOKE ? 10 : fallback);
}

// Seconds in a k6 duration string such as "90s", "3m" or "1m30s".
function seconds(value) {
  const parts = String(value).match(/(\d+(?:\.\d+)?)(ms|s|m|h)/g);
  if (!parts || parts.join('') !== String(value)) {
    throw new Error(`not a duration: "${value}"`);
  }
  const unit = { ms: 0.001, s: 1, m: 60, h: 3600 };
  return parts.reduce((sum, part) => {
    const [, n, u] = part.match(/(\d+(?:\.\d+)?)(ms|s|m|h)/);
    return sum + Number(n) * unit[u];
  }, 0);
}

// Stretches stages given as fractions of a run to a total duration, keeping the shape of a seed's
// ramp whatever DURATION is.
export function scaleStages(fractions, total) {
  const totalSeconds = seconds(total);
  return fractions.map(({ share, target }) => ({
    duration: `${Math.max(1, Math.round(share * totalSeconds))}s`,
    target,
  }));
}

// SLOs as thresholds: no failed request, every check passed, and p95/p99 per endpoint tag (in ms),
// plus for the load scenario as a whole. A failed threshold makes k6 exit with 99.
// P95_MS and P99_MS override the read SLO of a run (run.sh --slo floor: a ratio to the floor's, ADR 0203); MAX_FAILED_RATE (e.g. 0.01, runs with a database outage)
// allows that share of failed requests and failed checks instead of none. A smoke run lasts seconds on a JVM that is
// still compiling its first requests, so it checks correctness and allows ten times the latency.
export function slo({ endpoints, p95, p99, scenarios = [LOAD], arrivalRate = false, extra = {} }) {
  const scale = SMOKE ? 10 : 1;
  const read95 = envInt('P95_MS', p95 * scale);
  const read99 = envInt('P99_MS', p99 * scale);
  const maxFailed = Number(__ENV.MAX_FAILED_RATE || 0);
  const thresholds = {
    http_req_failed: [maxFailed > 0 ? `rate<${maxFailed}` : 'rate==0'],
    checks: [maxFailed > 0 ? `rate>${1 - maxFailed}` : 'rate==1'],
    [`http_req_duration{scenario:${LOAD}}`]: [`p(95)<${read95}`, `p(99)<${read99}`],
  };
  for (const [endpoint, limits] of Object.entries(endpoints)) {
    const [e95, e99] = limits ? limits.map((ms) => ms * scale) : [read95, read99];
    thresholds[`http_req_duration{endpoint:${endpoint}}`] = [`p(95)<${e95}`, `p(99)<${e99}`];
  }
  // Requests of the measured scenarios only (setup's cursor walk excluded), for the report's rate.
  for (const scenario of scenarios) {
    thresholds[`http_reqs{scenario:${scenario}}`] = ['count>0'];
  }
  if (arrivalRate) {
    // An iteration the load scenario could not start is a user the system turned away.
    // MAX_DROPPED: run.sh --slo floor allows what the floor dropped under the same load, times its ratio.
    const maxDropped = Number(__ENV.MAX_DROPPED || 0);
    thresholds[`dropped_iterations{scenario:${LOAD}}`] = [maxDropped > 0 ? `count<=${maxDropped}` : 'count==0'];
  }
  return Object.assign(thresholds, extra);
}

export const common = {
  summaryTrendStats: TREND_STATS,
  // The setup() cursor walk is one request per list page.
  setupTimeout: '10m',
};

export function envInt(name, fallback) {
  if (__ENV[name] === undefined || __ENV[name] === '') {
    return fallback;
  }
  const value = Number(__ENV[name]);
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`${name} must be a positive integer, got "${__ENV[name]}"`);
  }
  return value;
}
