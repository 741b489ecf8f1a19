// 1000 users per second (RATE), each replaying the journey: an open model, so new users keep
// arriving at the target rate however slow the server gets, and slowness shows up as latency and
// dropped iterations instead of quietly lowering the load.
import { collectCursors, journey } from '../lib/journey.js';
import { common, duration, LOAD, rate, slo } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

export const options = {
  ...common,
  scenarios: {
    [LOAD]: {
      executor: 'constant-arrival-rate',
      rate: rate(1000),
      timeUnit: '1s',
      duration: duration('60s'),
      // A journey takes a few ms when cached; 200 VUs cover 200 ms per journey at 1000/s before
      // k6 has to allocate more mid-run, which costs the load generator CPU.
      preAllocatedVUs: 200,
      maxVUs: 2000,
    },
  },
  thresholds: slo({
    endpoints: { list: null, 'list-next': null, detail: null, schedules: null },
    p95: 50,
    p99: 200,
    arrivalRate: true,
  }),
};

export function setup() {
  return collectCursors();
}
export default journey;
export const handleSummary = summaryFor('users-per-second');
