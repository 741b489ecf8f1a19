// The vus-1000 shape and journey against bare endpoints that answer fixed data of the same shape and
// size (CONCERTS_PATH, default /api/ceiling/concerts; the API's `ceiling` profile): no cache, no
// database. k6 sends the same requests and does the same work per response as in vus-1000, so on a
// machine k6 shares with the API the two runs differ only in what the API does. Its requests per
// second are the ceiling the cached endpoints are compared with.
import { collectCursors, journey, useConcertsPath } from '../lib/journey.js';
import { common, duration, LOAD, slo, vus } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

useConcertsPath('/api/ceiling/concerts');

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
  thresholds: slo({
    endpoints: { list: null, 'list-next': null, detail: null, schedules: null },
    p95: 1000,
    p99: 2000,
  }),
};

// collectCursors() fails with the status and the URL when the API runs without the ceiling profile.
export function setup() {
  return collectCursors();
}

export default journey;
export const handleSummary = summaryFor('bare-ceiling');
