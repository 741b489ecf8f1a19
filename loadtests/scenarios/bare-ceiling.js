// The vus-1000 shape against an endpoint that returns a fixed, precomputed list page: no cache, no
// database, no serialisation of fresh objects. Its requests per second are the ceiling of this
// machine with k6 on it, the number the cached endpoints are compared with.
import http from 'k6/http';
import { check } from 'k6';
import { BASE_URL } from '../lib/journey.js';
import { common, duration, LOAD, slo, vus } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

const CEILING_PATH = __ENV.CEILING_PATH || '/api/ceiling/concerts';

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
  thresholds: slo({ endpoints: { ceiling: null }, p95: 1000, p99: 2000 }),
};

export function setup() {
  const res = http.get(`${BASE_URL}${CEILING_PATH}`, { tags: { endpoint: 'setup' } });
  if (res.status !== 200) {
    throw new Error(`setup: GET ${CEILING_PATH} returned ${res.status}; the API serves it under a profile only`);
  }
}

export default function () {
  const res = http.get(`${BASE_URL}${CEILING_PATH}`, {
    timeout: '10s',
    tags: { endpoint: 'ceiling', name: `GET ${CEILING_PATH}` },
  });
  check(res, { 'ceiling 200': (r) => r.status === 200 });
}

export const handleSummary = summaryFor('bare-ceiling');
