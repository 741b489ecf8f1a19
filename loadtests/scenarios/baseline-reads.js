// The uncached baseline: the list (first 10 pages, by cursor) and the schedules (random
// concerts over the whole data set), each alone at a closed-loop VU count, one after the other, so
// each endpoint gets its own requests/s and p95/p99 (tags: endpoint=list|schedules).
import http from 'k6/http';
import { check } from 'k6';
import { SMOKE } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';
const CONCERTS = Number(__ENV.CONCERTS || 1500000);
const VUS = Number(__ENV.VUS || (SMOKE ? 10 : 100));
const PHASE = __ENV.PHASE_DURATION || (SMOKE ? '3s' : '30s');
const PAGES = 10;

export const options = {
  scenarios: {
    list: { executor: 'constant-vus', vus: VUS, duration: PHASE, exec: 'list', tags: { endpoint: 'list' } },
    schedules: {
      executor: 'constant-vus', vus: VUS, duration: PHASE, exec: 'schedules', startTime: PHASE,
      tags: { endpoint: 'schedules' },
    },
  },
  thresholds: {
    'http_req_failed': ['rate==0'],
    'http_reqs{scenario:list}': ['count>0'],
    'http_reqs{scenario:schedules}': ['count>0'],
    'http_req_duration{endpoint:list}': ['p(95)>=0', 'p(99)>=0'],
    'http_req_duration{endpoint:schedules}': ['p(95)>=0', 'p(99)>=0'],
  },
  summaryTrendStats: ['avg', 'med', 'p(95)', 'p(99)', 'max'],
};

export function setup() {
  const cursors = [''];
  for (let page = 1; page < PAGES; page++) {
    const body = http.get(`${BASE_URL}/api/concerts?size=20&cursor=${cursors[page - 1]}`).json();
    cursors.push(body.nextCursor);
  }
  return { cursors };
}

export function list(data) {
  const cursor = data.cursors[Math.floor(Math.random() * PAGES)];
  const response = http.get(`${BASE_URL}/api/concerts?size=20&cursor=${cursor}`, { tags: { name: 'list' } });
  check(response, { 'list 200': (r) => r.status === 200 });
}

export function schedules() {
  const id = 1 + Math.floor(Math.random() * CONCERTS);
  const response = http.get(`${BASE_URL}/api/concerts/${id}/schedules`, { tags: { name: 'schedules' } });
  check(response, { 'schedules 200': (r) => r.status === 200 });
}

export const handleSummary = summaryFor('baseline-reads');
