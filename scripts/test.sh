#!/usr/bin/env bash
# The test command, in tiers; installs what the tests need when it is missing. The tests start their own
# redis-server and mariadbd on free loopback ports and remove them afterwards.
#
#   scripts/test.sh               every tier, then a table of each tier's time and result
#   scripts/test.sh fast checks   the named tiers only, in the order below
#
#   fast         ./mvnw verify: unit tests and tests against one private Redis and MariaDB
#   integration  ./mvnw verify -Pintegration: Redis Cluster and Sentinel, capture failover, outages, the
#                warm-up, the allocation measurement, the max-clients reproduction (the pom's integration.tests)
#   checks       the load-test reports' arithmetic, compose.yaml, the Kubernetes manifests, every dashboard's PromQL
#   image        the container image from a clean tree of HEAD, built with buildah (no engine), seeded and started
#                against private Redis and MariaDB (.ci/image-check/run.sh)
#   e2e          the whole stack: k6 smoke runs, the built-in dashboard in headless Chromium (its screenshot is
#                ops/dashboard/screenshot.png), every Grafana panel against a real Prometheus scrape
#   smoke        the runner's main job with a database outage, and its comparison with the floor, smoke-sized
#   freshness    the freshness contract from outside under four faults, one runner invocation
#
# Every named tier runs even when one before it failed; the exit status is 1 when any failed. A tier's function
# runs where `set -e` does not apply (its status is collected), so its commands are chained with &&.
#
# Work that needs nothing the tiers before it make starts at once in the background, at the idle scheduling class
# (chrt --idle: it gets a core only when no other process wants one, so the foreground tiers run as they would
# without it), and its tier waits for it: the checks, and the image's build (from a clean tree of HEAD); once the
# fast tier has built the API's jar, the stack tiers' data set (generated and dumped into RUNNER_DATA_CACHE, from a
# copy of that jar that the stack tiers then run: the integration tier's build may rewrite the jar meanwhile). On
# two cores the JUnit tiers leave part of a core idle (failovers and outages are waits), enough for all three.
set -euo pipefail
cd "$(dirname "$0")/.."

TIERS=(fast integration checks image e2e smoke freshness)

tier_fast() {
  ./mvnw -B -ntp verify
}

tier_integration() {
  ./mvnw -B -ntp verify -Pintegration
}

tier_checks() {
  await_background checks
}

checks() {
  # The load-test report's arithmetic (ratios of --compare and --ceiling, the freshness verdict) and the runner's
  # options (lib/cli.py), with the reports' packages.
  (source loadtests/lib/python-env.sh && ensure_python_env &&
    python3 -m unittest discover -s loadtests/lib -p 'test_*.py') &&
    # compose.yaml cannot run here (no Docker engine): validate it with the compose-spec loader instead.
    bash .ci/compose-check/run.sh &&
    # The Kubernetes manifests, offline: strict schema of a fixed Kubernetes version, then the project's rules.
    bash .ci/kubernetes-check/run.sh &&
    # Every dashboard expression parses (promtool); the e2e tier checks their data against a live scrape.
    python3 ops/grafana/check-dashboards.py --promtool
}

tier_image() {
  await_background image_build && bash .ci/image-check/run.sh --built
}

image_build() {
  bash .ci/image-check/run.sh --build-only
}

tier_e2e() {
  await_data_set && bash scripts/e2e.sh
}

# The stack runs' size (scripts/e2e.sh, loadtests/run.sh): their data set, restored from RUNNER_DATA_CACHE after.
STACK_CONCERTS=5000

data_set() {
  source scripts/services.sh &&
    trap stop_services EXIT &&
    start_mariadb &&
    load_data_set java "$API_JAR" "$STACK_CONCERTS" "$BACKGROUND/data-set-generate.log" \
      --spring.datasource.url="$DB_JDBC_URL" &&
    echo "the stack tiers' data set: $STACK_CONCERTS concerts, dumped into $RUNNER_DATA_CACHE"
}

# Waits for the data set when it is being made in the background (a later tier finds it in RUNNER_DATA_CACHE).
await_data_set() {
  [[ -z ${BACKGROUND_PIDS[data_set]:-} ]] || await_background data_set || true
}

tier_smoke() {
  await_data_set &&
  # The README's main job, smoke-sized, with the database killed for 6 s in the middle: the runner from nothing to
  # its result table, and the outage path (no 5xx but 503, stale values served, loads again once the database is
  # back; ADR 0031); then its comparison with the floor and nginx (short rounds on one API).
    bash loadtests/run.sh db-outage 6s@8s --smoke --duration 25s && bash loadtests/run.sh ceiling --smoke
}

tier_freshness() {
  # Two instances, writes through either and with plain SQL, one run per fault on the same servers, data set and
  # instances (their caches emptied between runs; reader-kill last, so that nothing waits for its killed instance to
  # start again):
  # every Redis client connection killed every 2 s for a third of the run; the binary log unreadable for the middle
  # third (the reader stalls, ADR 0039); a rolling deploy behind nginx; the binary log's reader killed (SIGKILL)
  # halfway, the other instance taking its lease over. Each fails on any read older than 1 s after its write's
  # acknowledgement or a writer's own read behind its write; lags are reported, not judged: on two shared cores a
  # smoke run's p99 is the scheduler's.
  await_data_set &&
    FRESHNESS_OPTS="--lag-p99-ms none --sql-lag-p99-ms none" bash loadtests/run.sh --freshness --sql-writer \
      --fault redis-clients,capture-stall,rolling-deploy,reader-kill --smoke
}

# background NAME: the function NAME started in the background at the idle scheduling class, in a process group of
# its own (stopped with test.sh), its output kept for await_background.
declare -A BACKGROUND_PIDS=()
background() {
  export -f "$1"
  setsid chrt --idle 0 bash -c 'started=$SECONDS; status=0; "$1" || status=$?
    echo "$status $((SECONDS - started))" >"$2.status"; exit "$status"' background "$1" "$BACKGROUND/$1" \
    >"$BACKGROUND/$1.log" 2>&1 </dev/null &
  BACKGROUND_PIDS[$1]=$!
}

# await_background NAME: waits for NAME, prints its output and how long it ran; its exit status.
await_background() {
  local waited=$SECONDS status=0 ran
  wait "${BACKGROUND_PIDS[$1]}" || status=$?
  unset "BACKGROUND_PIDS[$1]"
  cat "$BACKGROUND/$1.log"
  read -r _ ran <"$BACKGROUND/$1.status" 2>/dev/null || ran='?'
  echo "($1: $ran s in the background, $((SECONDS - waited)) s waited for here)"
  return "$status"
}

stop_background() {
  local pid
  for pid in "${BACKGROUND_PIDS[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}

selected=("$@")
((${#selected[@]} > 0)) || selected=("${TIERS[@]}")
for name in "${selected[@]}"; do
  [[ " ${TIERS[*]} " == *" $name "* ]] || { echo "test.sh: no tier $name (tiers: ${TIERS[*]})" >&2; exit 2; }
done

scripts/install-deps.sh redis-server mariadb-server prometheus

# The stack runs' data set, generated once: the first run of a size dumps it here, the later ones restore it
# (scripts/services.sh's load_data_set). A RUNNER_DATA_CACHE from outside is kept, for tiers run one at a time.
BACKGROUND=$(mktemp -d "${TMPDIR:-/tmp}/concert-cache-test.XXXXXX")
export BACKGROUND
if [[ -z ${RUNNER_DATA_CACHE:-} ]]; then
  RUNNER_DATA_CACHE=$BACKGROUND/data
  mkdir "$RUNNER_DATA_CACHE"
fi
export RUNNER_DATA_CACHE
trap 'stop_background; rm -rf "$BACKGROUND"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[[ " ${selected[*]} " != *" checks "* ]] || background checks
[[ " ${selected[*]} " != *" image "* ]] || background image_build

results=()
failed=0
started=$SECONDS
for name in "${TIERS[@]}"; do
  [[ " ${selected[*]} " == *" $name "* ]] || continue
  printf '\n==== tier %s\n' "$name"
  tier_started=$SECONDS
  status=0
  "tier_$name" || status=$?
  elapsed=$((SECONDS - tier_started))
  verdict=passed
  if ((status != 0)); then
    verdict="FAILED (exit $status)"
    failed=1
  fi
  results+=("$(printf '%-12s %4d:%02d  %s' "$name" $((elapsed / 60)) $((elapsed % 60)) "$verdict")")
  if [[ $name == fast && $status == 0 && -f api/target/api.jar && " ${selected[*]} " =~ \ (e2e|smoke|freshness)\  ]]; then
    # Modification time kept: it names the dump (services.sh's load_data_set).
    cp -p api/target/api.jar "$BACKGROUND/api.jar"
    export API_JAR=$BACKGROUND/api.jar STACK_CONCERTS
    background data_set
  fi
done

total=$((SECONDS - started))
printf '\n==== tiers\n%-12s %7s  %s\n' tier time result
printf '%s\n' "${results[@]}"
printf '%-12s %4d:%02d\n' total $((total / 60)) $((total % 60))
exit "$failed"
