#!/usr/bin/env bash
# The test command: installs what the tests need when it is missing, then runs every test. The tests
# start their own redis-server and mariadbd on free loopback ports and remove them afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh redis-server mariadb-server prometheus
./mvnw -B -ntp verify
# The load-test report's arithmetic (ratios of --compare and --ceiling), with the reports' packages.
(source loadtests/lib/python-env.sh && ensure_python_env && python3 -m unittest discover -s loadtests/lib -p 'test_*.py')
# compose.yaml cannot run here (no Docker engine): validate it with the compose-spec loader instead.
bash .ci/compose-check/run.sh
# The Kubernetes manifests, offline: strict schema of a fixed Kubernetes version, then the project's rules.
bash .ci/kubernetes-check/run.sh
# Every dashboard expression parses (promtool); their data is checked against a live scrape elsewhere.
python3 ops/grafana/check-dashboards.py --promtool
# The whole stack: k6 smoke runs of every scenario, the built-in dashboard in headless Chromium, and
# every Grafana panel evaluated against a real Prometheus scrape.
bash scripts/e2e.sh
# The README's main job, smoke-sized: the runner from nothing to its result table; then its comparison
# with the bare endpoints (five short runs on one API).
bash loadtests/run.sh --smoke
bash loadtests/run.sh --smoke --ceiling
# The freshness contract from outside: two instances, writes through either and with plain SQL, every Redis
# client connection killed every 2 s for a third of the run; fails on any read older than 1 s after its write's
# acknowledgement. Lag limits are loose here: on two shared cores a smoke run's p99 is the scheduler's.
FRESHNESS_OPTS="--lag-p99-ms 1000 --sql-lag-p99-ms 1000" bash loadtests/run.sh --freshness --sql-writer \
  --fault redis-clients --smoke
# The reader of the binary log killed (SIGKILL) halfway: the other instance takes its lease over soon enough that
# no read, there, is older than 1 s after a plain SQL write's commit.
FRESHNESS_OPTS="--lag-p99-ms 1000 --sql-lag-p99-ms 1000" bash loadtests/run.sh --freshness --sql-writer \
  --fault reader-kill --smoke
# The binary log unreadable for the middle third (the reader stalls, ADR 0037): plain SQL writes are still served
# within 1 s on both instances, from the database past both tiers.
FRESHNESS_OPTS="--lag-p99-ms 1000 --sql-lag-p99-ms 1000" bash loadtests/run.sh --freshness --sql-writer \
  --fault capture-stall --smoke
# A rolling deploy: each instance stopped gracefully and started again in turn under load behind nginx (the lease
# handed over at shutdown, the new instance's fill from Redis and first reads); no read older than 1 s anywhere.
FRESHNESS_OPTS="--lag-p99-ms 1000 --sql-lag-p99-ms 1000" bash loadtests/run.sh --freshness --sql-writer \
  --fault rolling-deploy --smoke
