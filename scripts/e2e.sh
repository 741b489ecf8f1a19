#!/usr/bin/env bash
# End-to-end checks that need the whole stack: the API (cache profile) on private Redis and MariaDB,
# a real Prometheus scraping it and redis_exporter, k6 smoke runs of the scenarios (their SLOs are the
# assertions), the built-in dashboard in headless Chromium during load (its screenshot, the README's picture, is
# saved as ops/dashboard/screenshot.png), and every Grafana panel's PromQL evaluated against that Prometheus.
# Loopback only; everything stops at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

"$ROOT/scripts/install-deps.sh" redis-server mariadb-server prometheus prometheus-redis-exporter chromium

K6=$(command -v k6 || true)
for candidate in "$ROOT/loadtests/.bin/k6" "$HOME/go/bin/k6"; do
  [[ -n $K6 ]] || { [[ -x $candidate ]] && K6=$candidate; }
done
if [[ -z $K6 ]]; then
  echo "==> building k6 v1.8.1 into loadtests/.bin"
  GOBIN="$ROOT/loadtests/.bin" go install go.k6.io/k6@v1.8.1
  K6=$ROOT/loadtests/.bin/k6
fi
# API_JAR from outside (scripts/test.sh: the fast tier's jar) is used as it is.
JAR=${API_JAR:-$ROOT/api/target/api.jar}
[[ -f $JAR ]] || ./mvnw -q -B -ntp -pl api -am package -DskipTests

# shellcheck source=scripts/services.sh
source "$ROOT/scripts/services.sh"
WORK=$(mktemp -d /tmp/concert-cache-e2e.XXXXXX)
trap 'stop_services; rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The runner's size (loadtests/run.sh): with RUNNER_DATA_CACHE the later stack runs restore this data set.
CONCERTS=5000
TOKEN=e2e-admin-token

start_redis
start_mariadb
echo "==> generating $CONCERTS concerts"
load_data_set java "$JAR" "$CONCERTS" "$WORK/generate.log" --spring.datasource.url="$DB_JDBC_URL" ||
  { tail -30 "$WORK/generate.log"; exit 1; }

API_PORT=$(free_port)
MGMT_PORT=$(free_port)
echo "==> starting the API (cache profile) on $API_PORT, management $MGMT_PORT"
# A short JIT warm-up (ADR 0202): CI checks that it runs and leaves the caches cold, not how fast it makes the JVM.
CONCERT_CACHE_ADMIN_TOKEN=$TOKEN CONCERT_CACHE_CURSOR_SECRET=e2e-cursor-secret java "@$ROOT/api/jvm.options" -Xmx1g -jar "$JAR" --spring.profiles.active=cache \
  --concert-cache.warmup.max-duration=2s --server.port="$API_PORT" --management.server.port="$MGMT_PORT" \
  --spring.datasource.url="$DB_JDBC_URL" --spring.data.redis.port="$REDIS_PORT" > "$WORK/api.log" 2>&1 &
service_track api $!
# On two cores shared with a build the start alone can take over a minute (the runner's start_api waits 180 s too).
wait_for_port "$API_PORT" 180 "$!" || { tail -50 "$WORK/api.log"; exit 1; }
wait_for_port "$MGMT_PORT" 30
# Ready once the warm-up is over; until then readiness says OUT_OF_SERVICE (503).
deadline=$((SECONDS + 60))
until curl -sf "http://127.0.0.1:$MGMT_PORT/actuator/health/readiness" > /dev/null; do
  ((SECONDS < deadline)) || { echo "the API did not become ready"; tail -50 "$WORK/api.log"; exit 1; }
  sleep 0.5
done
grep -h 'Warm-up:' "$WORK/api.log"

EXPORTER_PORT=$(free_port)
prometheus-redis-exporter --redis.addr="redis://127.0.0.1:$REDIS_PORT" \
  --web.listen-address="127.0.0.1:$EXPORTER_PORT" > "$WORK/exporter.log" 2>&1 &
service_track redis-exporter $!

PROM_PORT=$(free_port)
sed -e "s/127.0.0.1:8081/127.0.0.1:$MGMT_PORT/" -e "s/127.0.0.1:9121/127.0.0.1:$EXPORTER_PORT/" \
  -e "s/127.0.0.1:9090/127.0.0.1:$PROM_PORT/" -e "s/scrape_interval: 5s/scrape_interval: 2s/" \
  -e "s/scrape_timeout: 4s/scrape_timeout: 2s/" ops/prometheus/prometheus-local.yml > "$WORK/prometheus.yml"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prometheus-data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --web.enable-remote-write-receiver > "$WORK/prometheus.log" 2>&1 &
service_track prometheus $!
wait_for_port "$PROM_PORT" 30

k6_smoke() {
  local scenario=$1
  echo "==> k6 smoke: $scenario"
  SMOKE=1 BASE_URL="http://127.0.0.1:$API_PORT" CONCERTS=$CONCERTS ADMIN_TOKEN=$TOKEN RESULTS_DIR="$WORK" \
    K6_PROMETHEUS_RW_SERVER_URL="http://127.0.0.1:$PROM_PORT/api/v1/write" \
    K6_PROMETHEUS_RW_TREND_STATS='p(95),p(99),avg' \
    "$K6" run -q --address "127.0.0.1:$(free_port)" -o experimental-prometheus-rw --tag "testid=e2e-$scenario" \
    "loadtests/scenarios/$scenario.js"
}

# The dashboard test drives its own reads; k6 runs alongside so the page sees a real load shape.
k6_smoke users-per-second &
K6_PID=$!
echo "==> built-in dashboard in headless Chromium"
(cd ops/dashboard && npm ci --no-audit --no-fund --silent && \
  EXPECT_CACHE=true DASHBOARD_URL="http://127.0.0.1:$MGMT_PORT/dashboard" API_URL="http://127.0.0.1:$API_PORT" \
  SCREENSHOT="$ROOT/ops/dashboard/screenshot.png" npm test)
wait "$K6_PID"
# Writes on their own: a write's p95 (2 s in a smoke run) is the scheduler's when other runs share the cores.
k6_smoke read-write-mix
# The read-only scenarios side by side (a smoke run is a few seconds; its read SLOs are ten times the full run's),
# each one's output printed once all have ended; any failure fails the tier.
scenarios=(seed-000-list-100vus seed-001-arrival-500 seed-002-ramping vus-1000)
declare -A k6_pids=()
for scenario in "${scenarios[@]}"; do
  k6_smoke "$scenario" >"$WORK/k6-$scenario.log" 2>&1 &
  k6_pids[$scenario]=$!
done
k6_failed=()
for scenario in "${scenarios[@]}"; do
  wait "${k6_pids[$scenario]}" || k6_failed+=("$scenario")
  cat "$WORK/k6-$scenario.log"
done
((${#k6_failed[@]} == 0)) || { echo "e2e: k6 smoke runs failed: ${k6_failed[*]}"; exit 1; }

# A healthy load has no client errors; a few real ones give the 4xx panel something to show.
for _ in 1 2 3 4 5; do
  curl -s -o /dev/null "http://127.0.0.1:$API_PORT/api/concerts/999999999"
  curl -s -o /dev/null "http://127.0.0.1:$API_PORT/api/concerts?size=0"
done
sleep 5 # two scrapes, so the rates see the errors

echo "==> every Grafana panel returns data from a real Prometheus scrape"
# Empty by design on a healthy run: errors, stale reads, 5xx, dropped iterations.
python3 ops/grafana/check-dashboards.py --prometheus "http://127.0.0.1:$PROM_PORT" --range 5m \
  --allow-empty 'L2 errors|Stale|5xx responses|dropped'
echo "e2e: OK"
