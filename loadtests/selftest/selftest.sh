#!/usr/bin/env bash
# Tests the load-test kit without Java or a data set: every scenario in smoke mode, then a profile
# comparison, through loadtests/run.sh against the stand-in API (real Redis and MariaDB). Stops at
# the first run that fails or misses an SLO, and shows its output.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT

check() {
  echo "selftest: $*"
  if ! "$ROOT/loadtests/run.sh" --standin --smoke --concerts 1000 "$@" >"$LOG" 2>&1; then
    tail -n 40 "$LOG" >&2
    echo "selftest: FAILED: run.sh $*" >&2
    exit 1
  fi
}

# expect_output REGEX: the last run's output has a line matching REGEX (grep -E).
expect_output() {
  if ! grep -Eq "$1" "$LOG"; then
    tail -n 40 "$LOG" >&2
    echo "selftest: FAILED: no line matching $1" >&2
    exit 1
  fi
}

for script in "$ROOT"/loadtests/scenarios/*.js; do
  check --scenario "$(basename "$script" .js)"
done
check --compare
check --scenario vus-1000 --ceiling
# A ratio of each cached run to the floor runs beside it, whatever its value: cache and floor are the same stand-in,
# so which one serves more on a machine shared with builds is noise (it read 0.96x and 0.82x under load 15-24).
expect_output '^  requests/s +.*\([0-9]+\.[0-9]{2}x\).*\([0-9]+\.[0-9]{2}x\)'
expect_output '^SLO of the next run: .*1\.25 x the floor.s \(floor-2\), x10 smoke$'
# The main command's SLOs as ratios to a floor measured first in the same run, here in smoke mode.
check --slo floor
expect_output '^  SLO: p95 < [0-9]+ ms, p99 < [0-9]+ ms, dropped <= 0: 2 x the floor.s \(floor\), x10 smoke$'
expect_output '^  p99 ms +[0-9.]+ +[0-9.]+ \([0-9.]+x\)$'
# The fleet: three stand-ins behind nginx, each with its row and a third of the requests; then two
# on a Redis Cluster. Reads only: each stand-in keeps its writes to itself, unlike the API.
check --instances 3
expect_output '^  api-3 +[0-9.]+ +3[0-9]\.[0-9]%'
expect_output '3 instance\(s\) behind nginx 127\.0\.0\.1:[0-9]+, Redis standalone'
check --instances 2 --redis cluster
expect_output '2 instance\(s\) behind nginx .*Redis cluster (127\.0\.0\.1:[0-9]+,){5}127\.0\.0\.1:[0-9]+$'
# The fleet's benchmarks: a write mix reported apart, the topology comparison (smoke: standalone, cluster,
# standalone) and a primary killed under load with the p99 per 5 s window around it (the stand-in does not use Redis:
# this checks the runner's machinery, the kill, the promotion and the report).
check --scenario users-per-second --writes 2 --instances 2
expect_output '^    writes/s +[0-9.]+ +scenario writes'
expect_output '^  read-your-write +100\.0%'
check --topology-compare --instances 2
expect_output '^  cluster / standalone [0-9.]+ +mean requests/s; cluster failed 0, dropped 0'
check --instances 2 --redis cluster --fault primary-kill --duration 20s
expect_output '^  p99 ms +run [0-9.]+, failover window [0-9.]+ .*: met\)$'
check --capture-compare
echo "selftest: all passed"
