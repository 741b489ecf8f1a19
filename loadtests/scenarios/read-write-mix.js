// The users-per-second read load plus a trickle of admin writes (WRITE_RATE/s, default 5) to
// popular concerts and schedules. After each write the same resource is read back and must show the
// new value at once: read_your_write is the share of such reads that did, and its SLO is 100%.
// Writes come from a single VU, so two writes never race on one key and a stale read is the
// cache's doing. Concert writes evict list pages, so this also shows what writes cost the hit ratio.
import { collectCursors, journey, writeThenRead } from '../lib/journey.js';
import { common, duration, envInt, LOAD, slo, SMOKE } from '../lib/options.js';
import { options as usersPerSecond } from './users-per-second.js';
import { summaryFor } from '../lib/summary.js';

const ADMIN_TOKEN = __ENV.ADMIN_TOKEN || '';
const WRITE_RATE = envInt('WRITE_RATE', SMOKE ? 2 : 5);

export const options = {
  ...common,
  scenarios: {
    // The users-per-second load as it is, plus the writes.
    [LOAD]: usersPerSecond.scenarios[LOAD],
    writes: {
      executor: 'constant-arrival-rate',
      exec: 'write',
      rate: WRITE_RATE,
      timeUnit: '1s',
      duration: duration('60s'),
      preAllocatedVUs: 1,
      maxVUs: 1,
    },
  },
  thresholds: slo({
    endpoints: { list: null, 'list-next': null, detail: null, schedules: null, write: [200, 500] },
    p95: 50,
    p99: 200,
    scenarios: [LOAD, 'writes'],
    arrivalRate: true,
    extra: { read_your_write: ['rate==1'] },
  }),
};

export function setup() {
  if (!ADMIN_TOKEN) {
    throw new Error('ADMIN_TOKEN is not set; the API refuses writes without its admin token');
  }
  return collectCursors();
}

export default journey;

export function write(data) {
  writeThenRead(data, ADMIN_TOKEN);
}

export const handleSummary = summaryFor('read-write-mix');
