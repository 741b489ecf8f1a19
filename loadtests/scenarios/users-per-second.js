// 1000 users per second (RATE), each replaying the journey: an open model, so new users keep
// arriving at the target rate however slow the server gets, and slowness shows up as latency and
// dropped iterations instead of quietly lowering the load.
//
// WRITE_RATE=N (run.sh --writes N) adds N admin writes a second (writeThenRead: a concert or one of its
// schedules, then a read that must show it) in a scenario of their own, "writes": its requests carry
// scenario:writes, so the load's reads (scenario:load) and its latency SLO are reported apart from them.
// WRITE_BASE_URL sends the writes and their read-backs to one instance (default BASE_URL).
import { BASE_URL, collectCursors, journey, writeThenRead } from '../lib/journey.js';
import { common, duration, LOAD, preAllocatedVUs, rate, slo, windowThresholds } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

const WRITE_RATE = Number(__ENV.WRITE_RATE || 0);
if (!Number.isInteger(WRITE_RATE) || WRITE_RATE < 0) {
  throw new Error(`WRITE_RATE must be a whole number of writes per second, got "${__ENV.WRITE_RATE}"`);
}
const ADMIN_TOKEN = __ENV.ADMIN_TOKEN || '';
// The instance the writes go to and are read back from (run.sh --instances: the first one, past nginx).
const WRITE_BASE_URL = (__ENV.WRITE_BASE_URL || BASE_URL).replace(/\/$/, '');

const scenarios = {
  [LOAD]: {
    executor: 'constant-arrival-rate',
    rate: rate(1000),
    timeUnit: '1s',
    duration: duration('60s'),
    // Allocated before the run starts: a VU allocated mid-run costs k6 milliseconds of CPU, and an
    // iteration due while no VU is free is dropped. 1000 VUs cover journeys of up to 1 s at 1000/s.
    preAllocatedVUs: preAllocatedVUs(1000),
    maxVUs: 2000,
  },
};
if (WRITE_RATE > 0) {
  scenarios.writes = {
    executor: 'constant-arrival-rate',
    exec: 'write',
    rate: WRITE_RATE,
    timeUnit: '1s',
    duration: duration('60s'),
    // A write and its read-backs take a few round trips: a few VUs keep up with a few writes a second.
    preAllocatedVUs: Math.max(2, WRITE_RATE),
    maxVUs: Math.max(4, 4 * WRITE_RATE),
  };
}

export const options = {
  ...common,
  scenarios,
  thresholds: slo({
    endpoints: { list: null, 'list-next': null, detail: null, schedules: null },
    p95: 50,
    p99: 200,
    scenarios: WRITE_RATE > 0 ? [LOAD, 'writes'] : [LOAD],
    arrivalRate: true,
    extra: Object.assign(
      windowThresholds(duration('60s')),
      WRITE_RATE > 0
        ? {
            read_your_write: ['rate==1'],
            'http_req_duration{scenario:writes}': ['p(99)<2000'],
            'dropped_iterations{scenario:writes}': ['count==0'],
          }
        : {},
    ),
  }),
};

export function setup() {
  if (WRITE_RATE > 0 && !ADMIN_TOKEN) {
    throw new Error('WRITE_RATE needs ADMIN_TOKEN; the API refuses writes without its admin token');
  }
  return collectCursors();
}
export default journey;

export function write(data) {
  writeThenRead(data, ADMIN_TOKEN, WRITE_BASE_URL);
}

export const handleSummary = summaryFor('users-per-second');
