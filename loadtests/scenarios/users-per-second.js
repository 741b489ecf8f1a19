// 1000 users per second (RATE), each replaying the journey: an open model, so new users keep
// arriving at the target rate however slow the server gets, and slowness shows up as latency and
// dropped iterations instead of quietly lowering the load.
import { collectCursors, journey } from '../lib/journey.js';
import { common, duration, LOAD, preAllocatedVUs, rate, slo } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

export const options = {
  ...common,
  scenarios: {
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
