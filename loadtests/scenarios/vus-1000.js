// Seed 004's shape: 1000 users arrive within one second and keep browsing (the journey in a loop,
// no think time). A closed model: throughput is VUs / journey time, so this measures what the
// service sustains under 1000 concurrent connections, and latency ≈ 1000 / requests per second.
import { collectCursors, journey } from '../lib/journey.js';
import { common, duration, LOAD, slo, vus } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

export const options = {
  ...common,
  scenarios: {
    [LOAD]: {
      executor: 'ramping-vus',
      startVUs: 0,
      stages: [
        { duration: '1s', target: vus(1000) },
        { duration: duration('60s'), target: vus(1000) },
      ],
      gracefulRampDown: '5s',
    },
  },
  // Closed-loop latency is set by Little's law, not by the cache alone; these SLOs catch collapse
  // (timeouts, errors, multi-second tails), the failure seed 004 reports.
  thresholds: slo({
    endpoints: { list: null, 'list-next': null, detail: null, schedules: null },
    p95: 1000,
    p99: 2000,
  }),
};

export function setup() {
  return collectCursors();
}
export default journey;
export const handleSummary = summaryFor('vus-1000');
