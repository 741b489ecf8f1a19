// Seed 003's shape: 10 VUs ramping to 20 and holding, each replaying the journey with no think time (a closed
// loop: the load is as fast as the service answers). The seed sized Tomcat's threads and HikariCP for this range
// on 2 cores and reached 721 requests/s at most, with 400 ms G1 pauses; half the run ramps, half holds.
import { collectCursors, journey } from '../lib/journey.js';
import { common, duration, LOAD, scaleStages, slo, vus } from '../lib/options.js';
import { summaryFor } from '../lib/summary.js';

const peak = vus(20);

export const options = {
  ...common,
  scenarios: {
    [LOAD]: {
      executor: 'ramping-vus',
      startVUs: Math.ceil(peak / 2),
      stages: scaleStages(
        [
          { share: 1 / 2, target: peak },
          { share: 1 / 2, target: peak },
        ],
        duration('60s'),
      ),
      gracefulRampDown: '5s',
    },
  },
  thresholds: slo({
    endpoints: { list: null, 'list-next': null, detail: null, schedules: null },
    p95: 50,
    p99: 200,
  }),
};

export function setup() {
  return collectCursors();
}
export default journey;
export const handleSummary = summaryFor('seed-003-vus-10-20');
