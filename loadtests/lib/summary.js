// End-of-test output: the full k6 summary as JSON for loadtests/lib/report.py, and a few lines for
// people. The JSON goes to $RESULTS_DIR/<scenario>-summary.json.
import { LOAD } from './options.js';

const RESULTS_DIR = (__ENV.RESULTS_DIR || 'loadtests/results').replace(/\/$/, '');
const ENDPOINTS = ['list', 'list-next', 'detail', 'schedules', 'write'];

export function summaryFor(scenario) {
  return function handleSummary(data) {
    return {
      [`${RESULTS_DIR}/${scenario}-summary.json`]: JSON.stringify(data, null, 2),
      stdout: text(scenario, data),
    };
  };
}

function text(scenario, data) {
  const m = data.metrics;
  const failed = failedThresholds(m);
  const loadSeconds = (data.state.testRunDurationMs - ((data.setup_data && data.setup_data.setupMs) || 0)) / 1000;
  const requests = Object.keys(m)
    .filter((k) => k.startsWith('http_reqs{scenario:'))
    .reduce((sum, k) => sum + m[k].values.count, 0);
  const iterations = m.iterations ? m.iterations.values.count : 0;
  const dropped = m.dropped_iterations ? m.dropped_iterations.values.count : 0;
  const failedRate = m.http_req_failed ? m.http_req_failed.values.rate : 0;
  const lines = [
    '',
    `${scenario}: ${failed.length === 0 ? 'all SLOs met' : `${failed.length} SLO(s) missed`}`,
    `  iterations ${iterations} (${(iterations / loadSeconds).toFixed(1)}/s), dropped ${dropped}`,
    `  requests   ${requests} (${(requests / loadSeconds).toFixed(1)}/s), failed ${(failedRate * 100).toFixed(2)}%`,
    `  ${'latency ms'.padEnd(12)}${['p50', 'p95', 'p99', 'max'].map((h) => h.padStart(9)).join('')}`,
  ];
  const rows = [['all', m[`http_req_duration{scenario:${LOAD}}`]]]
    .concat(ENDPOINTS.map((e) => [e, m[`http_req_duration{endpoint:${e}}`]]))
    .concat([['writes (all)', m['http_req_duration{scenario:writes}']]]);
  for (const [label, metric] of rows) {
    if (metric && metric.values.max > 0) {
      const v = metric.values;
      lines.push(`  ${label.padEnd(12)}${[v.med, v['p(95)'], v['p(99)'], v.max].map(ms).join('')}`);
    }
  }
  if (m.read_your_write) {
    lines.push(`  read-your-write ${(m.read_your_write.values.rate * 100).toFixed(2)}% of ${count(m.read_your_write)}`);
  }
  for (const f of failed) {
    lines.push(`  missed: ${f}`);
  }
  lines.push(`  summary: ${RESULTS_DIR}/${scenario}-summary.json`, '');
  return lines.join('\n');
}

function failedThresholds(metrics) {
  const failed = [];
  for (const [name, metric] of Object.entries(metrics)) {
    for (const [expr, result] of Object.entries(metric.thresholds || {})) {
      if (!result.ok) {
        failed.push(`${name} ${expr}`);
      }
    }
  }
  return failed;
}

function count(rateMetric) {
  return rateMetric.values.passes + rateMetric.values.fails;
}

function ms(value) {
  return value.toFixed(1).padStart(9);
}
