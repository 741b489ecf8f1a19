// Seed 000's shape: 100 virtual users (nGrinder: 1 agent, 1 process, 100 threads) calling one list
// endpoint back to back. Here the endpoint is the concert list, its pages chosen by the journey's
// popularity.
import { collectCursors, listOnly } from '../lib/journey.js';
import { common, duration, LOAD, slo, vus } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

export const options = {
  ...common,
  scenarios: {
    [LOAD]: { executor: 'constant-vus', vus: vus(100), duration: duration('60s') },
  },
  thresholds: slo({ endpoints: { list: null }, p95: 200, p99: 500 }),
};

export function setup() {
  return collectCursors();
}
export default listOnly;
export const handleSummary = summaryFor('seed-000-list-100vus');
