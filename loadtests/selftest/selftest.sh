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

for script in "$ROOT"/loadtests/scenarios/*.js; do
  check --scenario "$(basename "$script" .js)"
done
check --compare
check --scenario vus-1000 --ceiling
check --capture-compare
echo "selftest: all passed"
