// Seed 002's shape: VUs ramp 0→50→100→200→300 and hold, each reading a random one of list pages
// 1..10 by cursor with no think time. The seed ran 5+5+5+5+10 minutes; the stages keep those
// proportions within DURATION (default 3m). Pages are uniform, as in the seed, not Zipf.
import { collectCursors, getList, uniformIndex } from '../lib/journey.js';
import { common, duration, LOAD, scaleStages, slo, vus } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

const PAGES = 10;
const peak = vus(300);

export const options = {
  ...common,
  scenarios: {
    [LOAD]: {
      executor: 'ramping-vus',
      startVUs: 0,
      stages: scaleStages(
        [
          { share: 1 / 6, target: Math.ceil(peak / 6) },
          { share: 1 / 6, target: Math.ceil(peak / 3) },
          { share: 1 / 6, target: Math.ceil((peak * 2) / 3) },
          { share: 1 / 6, target: peak },
          { share: 1 / 3, target: peak },
        ],
        duration('3m'),
      ),
      gracefulRampDown: '5s',
    },
  },
  // The seed measured p95 1.4 s at 300 VUs without a cache.
  thresholds: slo({ endpoints: { list: null }, p95: 500, p99: 1000 }),
};

export function setup() {
  return collectCursors(PAGES);
}

export default function (data) {
  getList(data.cursors[uniformIndex(PAGES)]);
}

export const handleSummary = summaryFor('seed-002-ramping');
