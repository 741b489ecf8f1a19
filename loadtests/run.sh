#!/usr/bin/env bash
# One command for a load test on this machine: gets what is missing (k6, redis-server, mariadb-server,
# the API jar), starts private Redis and MariaDB on loopback, loads the data, starts the API, replays
# a k6 scenario and prints a result table. Everything it started stops when it ends or is interrupted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K6_VERSION=v1.8.1
JDK25_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
PROFILES_COMPARED=(none redis-only cache)
# The floor (floor/, ADR 0203): the API's read contract from memory on a plain Spring Boot app with its defaults,
# in a process of its own. --ceiling alternates it with the cache; a single run measures it first and states its
# latency SLOs as ratios to it (--slo floor). Each cached run's p95/p99 may be this many times the floor's just
# before it: on a cache just started (cold) and on a warm one.
FLOOR_ROUNDS_COLD_RATIO=2
FLOOR_ROUNDS_WARM_RATIO=1.25
# A floor round is this long unless --duration says otherwise, after a warm-up round of its JIT (the API warms its
# own before readiness, ADR 0202) at a rate that leaves C2 a core: measured, a 10 s warm-up at the full 1000/s left
# the first floor round at p99 1.2 s against 64 ms for the third.
FLOOR_DURATION=${FLOOR_DURATION:-30s}
FLOOR_WARMUP=${FLOOR_WARMUP:-30s}
FLOOR_WARMUP_RATE=${FLOOR_WARMUP_RATE:-300}
DB_OUTAGE_WARMUP=${DB_OUTAGE_WARMUP:-30s}
FRESHNESS_WARMUP=${FRESHNESS_WARMUP:-30s}
# --capture-compare: capture off and on in turn, each on a fresh API; every "on" run sits between two "off"
# runs, so its ratio is to their mean and the machine's drift over the rounds shows (as --ceiling does).
CAPTURE_ROUNDS=(capture-off-1 capture-on-1 capture-off-2 capture-on-2 capture-off-3)

# The options: lib/cli.py parses and checks them (loadtests/run.sh [SUBCOMMAND] --help) and hands back, on
# descriptor 3 so that its help reaches stdout, shell assignments of every variable the options set (SCENARIO,
# SMOKE, CEILING, FAULT, ...; defaults included); after the help (exit 0) or an error (exit 2) nothing.
{ settings=$(RUN_SH_SETTINGS_FD=3 python3 "$ROOT/loadtests/lib/cli.py" "$@" 3>&1 1>&4 4>&-); } 4>&1 || exit
[[ -n $settings ]] || exit 0
eval "$settings"
# Which primary --fault primary-kill kills: "stream", the one holding the invalidation stream (its replica may lack
# the last announcements: the worst case; without the binlog reader every instance flushes L1, with it L1 stays and
# the reader lands again from its checkpoint), or "other", one without it (the generations move, L1 stays; ADR 0039,
# "Failover rule").
FAULT_PRIMARY=${FAULT_PRIMARY:-stream}
[[ $FAULT_PRIMARY =~ ^(stream|other|capture)$ ]] || { echo "FAULT_PRIMARY is stream, other or capture" >&2; exit 2; }

die() {
  echo "run.sh: $*" >&2
  exit 1
}

step() {
  printf '\n==> %s\n' "$*"
}

# shellcheck source=scripts/services.sh
source "$ROOT/scripts/services.sh"
# shellcheck source=loadtests/lib/db-outage.sh
source "$ROOT/loadtests/lib/db-outage.sh"
# shellcheck source=loadtests/lib/freshness.sh
source "$ROOT/loadtests/lib/freshness.sh"
# shellcheck source=loadtests/lib/nginx.sh
source "$ROOT/loadtests/lib/nginx.sh"
# shellcheck source=loadtests/lib/fleet.sh
source "$ROOT/loadtests/lib/fleet.sh"
# shellcheck source=loadtests/lib/http-limit.sh
source "$ROOT/loadtests/lib/http-limit.sh"
# shellcheck source=loadtests/lib/python-env.sh
source "$ROOT/loadtests/lib/python-env.sh"
[[ -z $DB_OUTAGE ]] || db_outage_parse "$DB_OUTAGE"
# The floor's rounds and the cache's must be equally long: a p99 over 60 s is not one over 30 s.
! { $CEILING && [[ -z $DURATION ]] && ! $SMOKE; } || DURATION=$FLOOR_DURATION
IFS=, read -ra FAULTS <<<"$FAULT"
FAULT=${FAULTS[0]}
fleet_ensure_nginx
trap stop_services EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- tools -------------------------------------------------------------------------------------

find_k6() {
  local candidate
  for candidate in "${K6:-}" "$(command -v k6 || true)" "$ROOT/loadtests/.bin/k6" "$HOME/go/bin/k6"; do
    if [[ -n $candidate && -x $candidate ]]; then
      echo "$candidate"
      return
    fi
  done
}

ensure_k6() {
  K6=$(find_k6)
  if [[ -n $K6 ]]; then
    return
  fi
  local go
  go=$(command -v go || true)
  [[ -n $go ]] || go=/usr/local/go/bin/go
  if [[ ! -x $go ]]; then
    die "k6 is not installed and there is no Go to build it. Install Go (https://go.dev/dl/) or k6 $K6_VERSION
(https://grafana.com/docs/k6/latest/set-up/install-k6/), or point K6=/path/to/k6 at one, and rerun."
  fi
  step "building k6 $K6_VERSION into loadtests/.bin (takes a few minutes, once)"
  GOBIN="$ROOT/loadtests/.bin" "$go" install "go.k6.io/k6@$K6_VERSION"
  K6=$ROOT/loadtests/.bin/k6
}

# Debian packages for what is missing, through the repo's installer (apt-get update first, root only).
ensure_packages() {
  local missing=()
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing+=(redis-server)
  { command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]]; } && command -v mariadb >/dev/null ||
    missing+=(mariadb-server)
  command -v curl >/dev/null || missing+=(curl)
  command -v python3 >/dev/null || missing+=(python3)
  if ((${#missing[@]} > 0)); then
    step "installing ${missing[*]}"
    "$ROOT/scripts/install-deps.sh" "${missing[@]}" || die "could not install ${missing[*]}"
  fi
}

ensure_java() {
  JAVA=java
  if $JDK25; then
    JAVA=$JDK25_HOME/bin/java
  fi
  command -v "$JAVA" >/dev/null || die "no $JAVA (a JDK 17+ is needed; --jdk25 expects $JDK25_HOME)"
}

# Rebuilds when the jar is missing or older than any source or build file of the modules it contains;
# an API_JAR given from outside is used as it is.
ensure_jar() {
  if [[ -n ${API_JAR:-} ]]; then
    [[ -f $API_JAR ]] || die "API_JAR=$API_JAR does not exist"
    JAR=$API_JAR
    return
  fi
  JAR=$ROOT/api/target/api.jar
  if [[ -f $JAR ]] && [[ -z $(find "$ROOT/pom.xml" "$ROOT/api" "$ROOT/cache-config" \
    \( -path '*/target' -prune \) -o -type f -newer "$JAR" -print -quit 2>/dev/null) ]]; then
    return
  fi
  step "building api/target/api.jar"
  # forceCreation: the jar plugin keeps a jar whose own classes did not change, and Boot's repackage then keeps
  # the libraries inside it: a change to cache-config alone would run the old library.
  (cd "$ROOT" && ./mvnw -q -pl api -am package -DskipTests -Dmaven.jar.forceCreation=true)
  [[ -f $JAR ]] || die "the build did not produce $JAR"
}

# ensure_aot_cache: the jar extracted and its AOT cache, as api/Dockerfile makes them (the same training run and JVM
# options), made again when the jar or api/jvm.options is newer; the API then runs on Temurin 25 from them.
ensure_aot_cache() {
  local dir=$ROOT/api/target/aot
  if [[ ! -f $dir/api.aot || $dir/api.aot -ot $JAR || $dir/api.aot -ot $ROOT/api/jvm.options ]]; then
    step "extracting $JAR and training its AOT cache (Temurin 25) into $dir"
    rm -rf "$dir"
    "$JDK25_HOME/bin/java" -Djarmode=tools -jar "$JAR" extract --destination "$dir" >/dev/null
    CONCERT_CACHE_ADMIN_TOKEN=training CONCERT_CACHE_CURSOR_SECRET=training SPRING_PROFILES_ACTIVE=cache \
      "$JDK25_HOME/bin/java" "@$ROOT/api/jvm.options" -XX:AOTCacheOutput="$dir/api.aot" -Dspring.context.exit=onRefresh -jar "$dir/api.jar" \
      --spring.datasource.url=jdbc:mariadb://127.0.0.1:9/training --spring.flyway.enabled=false \
      --spring.data.redis.port=9 --concert-cache.capture.mode=off >"$dir/training.log" 2>&1 ||
      die "the AOT cache's training run failed; see $dir/training.log"
  fi
  # The API's JVM only: the floor keeps its own (ADR 0203).
  API_JAVA=$JDK25_HOME/bin/java
  JAR=$dir/api.jar
  # AOTMode=on: a JVM that refuses the cache (another collector in API_JAVA_OPTS, say: ADR 0209) fails to start
  # rather than being measured without it.
  API_JAVA_OPTS="-XX:AOTCache=$dir/api.aot -XX:AOTMode=on ${API_JAVA_OPTS:-}"
}

# The floor's jar, rebuilt when older than its sources (FLOOR_JAR from outside is used as it is).
ensure_floor_jar() {
  if [[ -n ${FLOOR_JAR:-} ]]; then
    [[ -f $FLOOR_JAR ]] || die "FLOOR_JAR=$FLOOR_JAR does not exist"
    return
  fi
  FLOOR_JAR=$ROOT/floor/target/floor.jar
  if [[ -f $FLOOR_JAR ]] && [[ -z $(find "$ROOT/pom.xml" "$ROOT/floor" \( -path '*/target' -prune \) -o -type f \
    -newer "$FLOOR_JAR" -print -quit 2>/dev/null) ]]; then
    return
  fi
  step "building floor/target/floor.jar"
  (cd "$ROOT" && ./mvnw -q -pl floor -am package -DskipTests)
  [[ -f $FLOOR_JAR ]] || die "the build did not produce $FLOOR_JAR"
}

# --- the API -----------------------------------------------------------------------------------

# load_data: CONCERTS concerts (generate profile, seed 42); restored from a dump instead with RUNNER_DATA_CACHE
# (scripts/services.sh's load_data_set). MySQL is always generated: the dump is MariaDB's.
load_data() {
  local started=$SECONDS
  step "loading $CONCERTS concerts (generate profile, seed 42)"
  if ! RUNNER_DATA_CACHE=$([[ $DB == mariadb ]] && echo "${RUNNER_DATA_CACHE:-}") \
    load_data_set "$JAVA" "$JAR" "$CONCERTS" "$RESULTS/generate.log" "${BACKENDS[@]}"; then
    tail -n 30 "$RESULTS/generate.log" >&2
    die "loading data failed; see $RESULTS/generate.log"
  fi
  echo "loaded in $((SECONDS - started)) s$(grep -q '^restoring' "$RESULTS/generate.log" && echo ', from the dump of an earlier run' || true)"
}

# When each API process (by pid) was launched, for its start-to-ready time.
declare -A _API_LAUNCHED=()

# start_api PROFILE LOG: the API (or its stand-in) on API_PORT/MGMT_PORT, healthy or the run stops.
start_api() {
  launch_api "$1" "$2"
  await_api "$1" "$2" "${_SERVICE_PIDS[-1]}" "$MGMT_PORT"
}

# launch_api PROFILE LOG: the API (or its stand-in) on API_PORT/MGMT_PORT, started and tracked (the last of
# _SERVICE_PIDS), not waited for: instances that start side by side share their warm-ups' wall-clock time.
launch_api() {
  local profile=$1 log=$2
  if $STANDIN; then
    python3 "$ROOT/loadtests/selftest/standin.py" --port "$API_PORT" --management-port "$MGMT_PORT" \
      --concerts "$CONCERTS" --profile "$profile" --token="$ADMIN_TOKEN" >"$log" 2>&1 &
  else
    local args=()
    [[ $profile == none ]] || args+=("--spring.profiles.active=$profile")
    ! $JDK25 || args+=(--spring.threads.virtual.enabled=true)
    # A smoke run checks that things work, not how fast: a short JIT warm-up (ADR 0202) is enough.
    ! $SMOKE || args+=(--concert-cache.warmup.max-duration=2s)
    # API_READY_WITHIN (instances started side by side): JVMs that share the cores while they start take longer
    # than the default, and a measurement needs their warm-up.
    [[ -z ${API_READY_WITHIN:-} ]] || args+=("--concert-cache.warmup.ready-within=$API_READY_WITHIN")
    [[ -z ${CAPTURE_MODE:-} ]] || args+=("--concert-cache.capture.mode=$CAPTURE_MODE")
    # API_NICE (fleet.sh's joiner): the JVM starts at that niceness, its warm-up yielding the cores to serving instances.
    local launcher=()
    [[ -z ${API_NICE:-} ]] || launcher=(nice -n "$API_NICE")
    # The service's JVM options (api/jvm.options), then API_JAVA_OPTS, a list of JVM flags that win over them.
    # shellcheck disable=SC2086 # API_JAVA_OPTS is a list of JVM flags
    CONCERT_CACHE_ADMIN_TOKEN=$ADMIN_TOKEN CONCERT_CACHE_CURSOR_SECRET=$CURSOR_SECRET "${launcher[@]}" "${API_JAVA:-$JAVA}" "@$ROOT/api/jvm.options" ${API_JAVA_OPTS:-} -jar "$JAR" "${args[@]}" \
      "${BACKENDS[@]}" --server.address=127.0.0.1 "--server.port=$API_PORT" \
      --management.server.address=127.0.0.1 "--management.server.port=$MGMT_PORT" >"$log" 2>&1 &
  fi
  local pid=$!
  _API_LAUNCHED[$pid]=$EPOCHREALTIME
  service_track api "$pid"
}

# await_api PROFILE LOG PID MGMT_PORT: until the API that launch_api started is ready, or the run stops.
await_api() {
  local profile=$1 log=$2 pid=$3 mgmt=$4 launched=${_API_LAUNCHED[$3]:-$EPOCHREALTIME}
  service_await_ready "$pid" 180 "$log" curl -sf "http://127.0.0.1:$mgmt/actuator/health/readiness" ||
    die "the API ($profile) did not become healthy; see $log"
  # Start-to-ready (target 25 s, ADR 0202): from the launch of the JVM to the first ready answer, to 0.2 s.
  local ready_seconds
  ready_seconds=$(python3 -c "print(f'{$EPOCHREALTIME - $launched:.1f}')")
  echo "the API ($profile) was ready $ready_seconds s after its JVM started" | tee "${log%.log}-ready.txt"
}

# start_floor LOG: the floor on FLOOR_PORT with the run's data set and cursor secret, answering, or the run stops.
# Nothing tuned: Boot's defaults are what it measures.
start_floor() {
  local log=$1 pid
  FLOOR_PORT=$(free_port 8090)
  step "starting the floor on $FLOOR_PORT ($CONCERTS concerts in memory)"
  if $STANDIN; then
    python3 "$ROOT/loadtests/selftest/standin.py" --port "$FLOOR_PORT" --management-port "$(free_port)" \
      --concerts "$CONCERTS" --profile none >"$log" 2>&1 &
  else
    # shellcheck disable=SC2086 # FLOOR_JAVA_OPTS is a list of JVM flags (e.g. the same GC log as the API's)
    "$JAVA" ${FLOOR_JAVA_OPTS:-} -jar "$FLOOR_JAR" --server.address=127.0.0.1 "--server.port=$FLOOR_PORT" "--floor.concerts=$CONCERTS" \
      "--concert-cache.cursor-secret=$CURSOR_SECRET" >"$log" 2>&1 &
  fi
  pid=$!
  service_track floor "$pid"
  service_await_ready "$pid" 120 "$log" curl -sf "http://127.0.0.1:$FLOOR_PORT/api/concerts?size=1" ||
    die "the floor did not start; see $log"
}

# floor_round LABEL DIR: the scenario against the floor, FLOOR_DURATION long (--duration when given); its own
# latency and dropped iterations are what the cached runs are held to, not limits of its own (only failed requests
# and checks count). The first one after start_floor warms the floor's JIT first (FLOOR_WARMUP, not reported).
floor_round() {
  local label=$1 dir=$2 DURATION=$DURATION
  # As long as the cache's rounds: with --smoke, the scenario's own smoke length.
  $SMOKE || DURATION=${DURATION:-$FLOOR_DURATION}
  local SLO_ENV=(--env P95_MS=60000 --env P99_MS=60000 --env MAX_DROPPED=1000000000)
  if [[ -z ${FLOOR_WARM:-} ]] && ! $SMOKE; then
    echo "warming the floor's JIT: $FLOOR_WARMUP at $FLOOR_WARMUP_RATE journeys/s"
    DURATION=$FLOOR_WARMUP RATE=$FLOOR_WARMUP_RATE replay "$SCENARIO" floor-warmup "$dir-warmup" \
      "http://127.0.0.1:$FLOOR_PORT" >/dev/null
    FLOOR_WARM=1
  fi
  replay "$SCENARIO" "$label" "$dir" "http://127.0.0.1:$FLOOR_PORT"
  [[ $K6_STATUS == 0 ]] || exit_status=$K6_STATUS
}

# floor_limits FLOOR_DIR RATIO: SLO_ENV for the next run, its p95/p99 and dropped iterations RATIO times the
# floor run's (x10 in smoke mode, as the fixed limits are); SLO_TEXT says so in the table.
floor_limits() {
  local p95 p99 dropped
  read -r p95 p99 dropped < <(python3 "$ROOT/loadtests/lib/report.py" limits "$1" "$2" "$($SMOKE && echo 10 || echo 1)")
  SLO_ENV=(--env "P95_MS=$p95" --env "P99_MS=$p99" --env "MAX_DROPPED=$dropped")
  SLO_TEXT="p95 < $p95 ms, p99 < $p99 ms, dropped <= $dropped: $2 x the floor's ($(basename "$1"))$($SMOKE && echo ', x10 smoke' || true)"
  echo "SLO of the next run: $SLO_TEXT"
  if ((dropped > 0)); then
    echo "run.sh: warning: the floor itself dropped iterations (load average $(cut -d' ' -f1-3 /proc/loadavg)):" \
      "this machine cannot offer this load to a plain Boot app right now; lower --rate or rerun when it is quieter" >&2
  fi
}

# --- measurements ------------------------------------------------------------------------------

# snapshot DIR: the counters report.py subtracts, taken right before and right after k6.
snapshot() {
  mkdir -p "$1"
  date +%s.%N >"$1/time.txt"
  # No MGMT_PORT: the load went through nginx to instances that restarted (--fault rolling-deploy).
  [[ -z $MGMT_PORT ]] || curl -sf "http://127.0.0.1:$MGMT_PORT/actuator/prometheus" >"$1/prometheus.txt" ||
    echo "run.sh: warning: could not scrape /actuator/prometheus" >&2
  mariadb --no-defaults --socket="$DB_SOCKET" -uroot -N -B \
    -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Questions', 'Max_used_connections')" \
    >"$1/mariadb.tsv"
  redis-cli -p "$REDIS_PORT" INFO | tr -d '\r' >"$1/redis.txt"
}

# Redis connected_clients once a second: the peak during the run is what "max number of clients
# reached" (seed 004) is about, and a single scrape after the run would miss it.
start_sampler() {
  (
    while sleep 1; do
      printf '%s %s\n' "$(date +%s)" \
        "$(redis-cli -p "$REDIS_PORT" INFO clients | tr -d '\r' | sed -n 's/^connected_clients://p')"
    done
  ) >"$1" 2>/dev/null &
  service_track sampler $!
}

# run_k6 DIR: replays the scenario in the foreground (k6 shows its progress, Ctrl-C reaches it);
# leaves k6's exit status in K6_STATUS.
run_k6() {
  local dir=$1
  local env=(--env "BASE_URL=${K6_BASE_URL:-http://127.0.0.1:$API_PORT}" --env "CONCERTS=$CONCERTS"
    --env "RESULTS_DIR=$dir" --env "ADMIN_TOKEN=$ADMIN_TOKEN")
  [[ -z $DURATION ]] || env+=(--env "DURATION=$DURATION")
  [[ -z $RATE ]] || env+=(--env "RATE=$RATE")
  [[ -z $WRITES ]] || env+=(--env "WRITE_RATE=$WRITES" --env "WRITE_BASE_URL=${WRITE_BASE_URL:-${K6_BASE_URL:-http://127.0.0.1:$API_PORT}}")
  [[ -z ${WINDOW_SECONDS:-} ]] || env+=(--env "WINDOW_SECONDS=$WINDOW_SECONDS")
  env+=("${SLO_ENV[@]}")
  # The bar for a run with the database killed: misses may fail, under 1% of requests; p99 under 100 ms. Most reads
  # of a smoke run are first touches, which fail while the database is down: there the outage report's verdict is
  # the bar.
  if [[ -n $DB_OUTAGE ]]; then
    if $SMOKE; then
      env+=(--env MAX_FAILED_RATE=1)
    else
      env+=(--env MAX_FAILED_RATE=0.01 --env "P99_MS=${P99_MS:-100}")
    fi
  fi
  local dashboard=()
  if $SMOKE; then
    env+=(--env SMOKE=1)
  else
    # k6's own live dashboard while the run lasts, and the same as a standalone HTML file after.
    dashboard=(K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_HOST=127.0.0.1
      "K6_WEB_DASHBOARD_PORT=$(free_port 5665)" "K6_WEB_DASHBOARD_EXPORT=$dir/report.html")
    echo "k6 live dashboard: http://127.0.0.1:${dashboard[2]#*=}"
  fi
  local output=()
  if [[ -n ${K6_PROMETHEUS_RW_SERVER_URL:-} ]]; then
    # k6's own series for the ops dashboards (ops/README.md), one testid per run.
    output=(-o experimental-prometheus-rw --tag "testid=$(basename "$dir")")
    export K6_PROMETHEUS_RW_TREND_STATS=${K6_PROMETHEUS_RW_TREND_STATS:-p(95),p(99),avg}
  fi
  K6_STATUS=0
  if [[ -n ${K6_BACKGROUND:-} ]]; then
    # For a fault timed from the shell meanwhile (lib/fleet.sh): k6 in the background, tracked, its REST API on a
    # port of its own (polled for the start of the load); the caller waits for K6_PID.
    K6_API_PORT=$(free_port)
    env "${dashboard[@]}" "$K6" run --address "127.0.0.1:$K6_API_PORT" "${output[@]}" "${env[@]}" \
      "$ROOT/loadtests/scenarios/$SCENARIO.js" &
    K6_PID=$!
    service_track k6 "$K6_PID"
    return
  fi
  env "${dashboard[@]}" "$K6" run "${output[@]}" "${env[@]}" "$ROOT/loadtests/scenarios/$SCENARIO.js" ||
    K6_STATUS=$?
}

# measure PROFILE DIR: one run against a freshly started API on an empty Redis.
measure() {
  local profile=$1 dir=$2
  mkdir -p "$dir"
  measure_api "$profile" "$dir/api.log"
  if [[ -n $DB_OUTAGE ]] && ! $SMOKE && [[ $DB_OUTAGE_WARMUP != 0* ]]; then
    # An outage strikes a service that has been serving: its caches hold what the load has read so far.
    echo "serving before the outage run: $DB_OUTAGE_WARMUP (not reported)"
    DB_OUTAGE="" DURATION=$DB_OUTAGE_WARMUP replay "$SCENARIO" "$profile-warmup" "$dir-warmup"
  fi
  replay "$SCENARIO" "$profile" "$dir"
}

# measure_api PROFILE LOG: empties Redis and starts the API, ready.
measure_api() {
  redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
  step "starting the API (profile $1)"
  start_api "$1" "$2"
}

# replay SCENARIO LABEL DIR [BASE_URL]: SCENARIO against the API as it is, counters sampled around
# k6; LABEL names the run in tables; BASE_URL points the journey elsewhere (the floor).
replay() {
  local SCENARIO=$1 label=$2 dir=$3 K6_BASE_URL=${4:-}
  mkdir -p "$dir"
  step "running $SCENARIO against $label"
  snapshot "$dir/before"
  start_sampler "$dir/redis-clients.tsv"
  [[ -z $DB_OUTAGE ]] || db_outage_start "$dir"
  run_k6 "$dir"
  service_stop sampler
  snapshot "$dir/after"
  [[ -z $DB_OUTAGE ]] || db_outage_finish "$dir"
  cat >"$dir/meta.txt" <<EOF
scenario=$SCENARIO
profile=$label
concerts=$CONCERTS
duration=${DURATION:-default}
rate=${RATE:-default}
smoke=$SMOKE
jdk25=$JDK25
aot_cache=$AOT_CACHE
standin=$STANDIN
db_outage=$DB_OUTAGE
base_url=${K6_BASE_URL:-http://127.0.0.1:$API_PORT}
slo=${SLO_TEXT:-fixed}
k6_exit=$K6_STATUS
load_average=$(cut -d' ' -f1-3 /proc/loadavg)
k6=$("$K6" version | head -n 1)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
dashboard=http://127.0.0.1:$MGMT_PORT/dashboard
EOF
}

# round_tables RUN...: each round's own table in RUN/table.txt, before the comparison of them all.
round_tables() {
  local run
  step "results"
  for run in "$@"; do
    python3 "$ROOT/loadtests/lib/report.py" table "$run" >"$run/table.txt"
  done
}

# start_sql_writer LOG: another application changing concerts with plain SQL on a connection of its own,
# SQL_WRITES_PER_S (default 2) autocommitted UPDATEs a second of the most read concerts, until stopped. One
# process (its client exits at end of input), so that stopping it stops everything it started.
start_sql_writer() {
  python3 -u -c '
import signal, subprocess, sys, time
socket, rate = sys.argv[1], float(sys.argv[2])
client = subprocess.Popen(["mariadb", "--no-defaults", "--socket=" + socket, "-uroot", "concert_cache"],
                          stdin=subprocess.PIPE, text=True)
version = 0
def done(*_):
    print(f"{version} UPDATEs sent")
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
while client.poll() is None:
    time.sleep(1 / rate)
    version += 1
    client.stdin.write(f"UPDATE concert SET title = CONCAT(\x27sql-\x27, id, \x27-{version}\x27), "
                       f"updated_at = UTC_TIMESTAMP(3) WHERE id = {version % 18 + 1};\n")
    client.stdin.flush()
sys.exit(f"the mariadb client ended after {version} UPDATEs")
' "$DB_SOCKET" "${SQL_WRITES_PER_S:-2}" >"$1" 2>&1 &
  service_track sql-writer $!
}

# --- main --------------------------------------------------------------------------------------

ensure_packages
# The reports' Python packages (prometheus_client): python3 is the venv's from here on.
ensure_python_env || die "could not set up loadtests/.venv (python3 -m venv, pip install -r loadtests/requirements.txt)"
ensure_k6
SLO_ENV=()
if ! $STANDIN; then
  ensure_java
  ensure_jar
  ! $AOT_CACHE || ensure_aot_cache
  if [[ $SLO_MODE == floor ]] || $CEILING || $JOIN; then
    ensure_floor_jar
  fi
fi

# A fresh admin token per run: writes need one, and nothing outside this run should know it.
ADMIN_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
CURSOR_SECRET=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
LABEL=$PROFILE
! $COMPARE || LABEL=compare
! $CEILING || LABEL=$PROFILE-vs-floor
! $CAPTURE_COMPARE || LABEL=capture-compare
RUN_NAME=$SCENARIO-$LABEL
! $FRESHNESS || RUN_NAME=freshness-$(IFS=+; echo "${FAULTS[*]}")$($SQL_WRITER && echo -sql || true)$($FRESHNESS_ONE_INSTANCE && echo -one-instance || true)
! fleet_active || RUN_NAME=$SCENARIO-$PROFILE-x${INSTANCES:-1}-${REDIS_MODE:-standalone}$([[ $FAULT == none ]] || echo "-$FAULT")
! $TOPOLOGY_COMPARE || RUN_NAME=$SCENARIO-$PROFILE-x$INSTANCES-topology-compare
RESULTS=$ROOT/loadtests/results/$(date -u +%Y%m%dT%H%M%SZ)-$RUN_NAME
mkdir -p "$RESULTS"

step "starting Redis and $DB (private, loopback)"
fleet_start_redis || die "Redis did not start"
"start_$DB" || die "$DB did not start"
echo "Redis 127.0.0.1:$REDIS_PORT, $DB 127.0.0.1:$DB_PORT"
mariadb --no-defaults --socket="$DB_SOCKET" -uroot -N -B -e "SELECT VERSION()" >"$RESULTS/db-version.txt"
BACKENDS=("--spring.datasource.url=$DB_JDBC_URL" --spring.datasource.username=concert
  --spring.datasource.password=concert "${REDIS_ARGS[@]}")
# The contract's ports when free, so the dashboard link is the usual one; any free port otherwise.
API_PORT=$(free_port 8080)
MGMT_PORT=$(free_port 8081)
[[ $MGMT_PORT != "$API_PORT" ]] || MGMT_PORT=$(free_port)

if ! $STANDIN; then
  load_data
fi

exit_status=0
if fleet_active && ! $FRESHNESS; then
  fleet_main "$RESULTS"
  exit_status=$FLEET_STATUS
elif $FRESHNESS; then
  freshness_runs "$RESULTS"
  exit_status=$FRESHNESS_STATUS
elif $COMPARE; then
  runs=()
  for profile in "${PROFILES_COMPARED[@]}"; do
    measure "$profile" "$RESULTS/$profile"
    runs+=("$RESULTS/$profile")
    case $K6_STATUS in 0 | 99) ;; *) exit_status=$K6_STATUS ;; esac
    if [[ $profile != "${PROFILES_COMPARED[-1]}" ]] || ! $KEEP_RUNNING; then
      service_stop api
    fi
  done
  round_tables "${runs[@]}"
  python3 "$ROOT/loadtests/lib/report.py" compare "${runs[@]}" | tee "$RESULTS/compare.txt"
elif $CEILING; then
  # One API and one floor process: floor, the cache still cold (its first touches after readiness), floor, then
  # the cache warm and a floor, WARM_ROUNDS times. Alternating shows the machine's drift; each cached run is
  # compared with the mean of the floor runs beside it, and held to 2x (cold) or 1.25x (warm) the floor's run
  # before it; the warm target is judged on the median of the warm rounds, as one round's p99 moves by 2x from
  # round to round, the floor's too (ADR 0203). The floor idles while the cache runs and the other way round.
  [[ -n $WARM_ROUNDS ]] || { WARM_ROUNDS=3; ! $SMOKE || WARM_ROUNDS=1; }
  # Before each warm round, nginx serving the API's crawled responses from files (lib/http-limit.sh): the HTTP
  # limit of this machine, in the same run (ADR 0205).
  labels=(floor-1 "$PROFILE-cold" floor-2)
  for ((round = 1; round <= WARM_ROUNDS; round++)); do
    labels+=("nginx-$round" "$PROFILE-warm-$round" "floor-$((round + 2))")
  done
  measure_api "$PROFILE" "$RESULTS/api.log"
  start_floor "$RESULTS/floor.log"
  runs=()
  for label in "${labels[@]}"; do
    case $label in
      floor-*)
        floor_round "$label" "$RESULTS/$label"
        last_floor=$RESULTS/$label
        ;;
      nginx-*) http_limit_round "$label" "$RESULTS/$label" ;;
      *)
        ratio=$FLOOR_ROUNDS_WARM_RATIO
        [[ $label != *-cold ]] || ratio=$FLOOR_ROUNDS_COLD_RATIO
        floor_limits "$last_floor" "$ratio"
        replay "$SCENARIO" "$label" "$RESULTS/$label"
        SLO_ENV=() SLO_TEXT=""
        [[ $K6_STATUS == 0 ]] || exit_status=$K6_STATUS
        ;;
    esac
    runs+=("$RESULTS/$label")
  done
  round_tables "${runs[@]}"
  mapfile -t cached_and_floor < <(printf '%s\n' "${runs[@]}" | grep -v '/nginx-[0-9]*$')
  python3 "$ROOT/loadtests/lib/report.py" ceiling "${cached_and_floor[@]}" | tee "$RESULTS/compare.txt"
  echo
  python3 "$ROOT/loadtests/lib/http_limit.py" "${runs[@]}" | tee "$RESULTS/http-limit.txt"
elif $CAPTURE_COMPARE; then
  runs=()
  for label in "${CAPTURE_ROUNDS[@]}"; do
    CAPTURE_MODE=required
    [[ $label == capture-on-* ]] || CAPTURE_MODE=off
    mkdir -p "$RESULTS/$label"
    measure_api "$PROFILE" "$RESULTS/$label/api.log"
    # The stand-in has no tables to write to.
    $STANDIN || start_sql_writer "$RESULTS/$label/sql-writer.log"
    replay "$SCENARIO" "$label" "$RESULTS/$label"
    service_stop sql-writer
    echo "capture_mode=$CAPTURE_MODE" >>"$RESULTS/$label/meta.txt"
    [[ $K6_STATUS == 0 ]] || exit_status=$K6_STATUS
    runs+=("$RESULTS/$label")
    if [[ $label != "${CAPTURE_ROUNDS[-1]}" ]] || ! $KEEP_RUNNING; then
      service_stop api
    fi
  done
  round_tables "${runs[@]}"
  python3 "$ROOT/loadtests/lib/report.py" capture "${runs[@]}" | tee "$RESULTS/compare.txt"
else
  if [[ $SLO_MODE == floor ]]; then
    # The run's latency SLO as a ratio to what this machine gives a plain Boot app right now (ADR 0203): the
    # floor first, stopped before the API starts; the API starts with cold caches, hence the cold ratio.
    start_floor "$RESULTS/floor.log"
    floor_round floor "$RESULTS/floor"
    service_stop floor
    floor_limits "$RESULTS/floor" "$FLOOR_ROUNDS_COLD_RATIO"
  fi
  measure "$PROFILE" "$RESULTS"
  [[ $K6_STATUS == 0 ]] || exit_status=$K6_STATUS
  step "results"
  python3 "$ROOT/loadtests/lib/report.py" table "$RESULTS" | tee "$RESULTS/table.txt"
  if [[ $SLO_MODE == floor ]]; then
    echo
    python3 "$ROOT/loadtests/lib/report.py" compare "$RESULTS/floor" "$RESULTS" | tee "$RESULTS/compare.txt"
  fi
  if [[ -n $DB_OUTAGE ]]; then
    python3 "$ROOT/loadtests/lib/db_outage_report.py" "$RESULTS" >"$RESULTS/db-outage.txt" || exit_status=1
    cat "$RESULTS/db-outage.txt"
  fi
fi

if $KEEP_RUNNING; then
  step "still running until Ctrl-C"
  echo "API        http://127.0.0.1:$API_PORT/api/concerts"
  echo "dashboard  http://127.0.0.1:$MGMT_PORT/dashboard"
  echo "metrics    http://127.0.0.1:$MGMT_PORT/actuator/prometheus"
  echo "Redis      redis-cli -p $REDIS_PORT"
  echo "MariaDB    mariadb --no-defaults -h127.0.0.1 -P$DB_PORT -uconcert -pconcert concert_cache"
  service_await_any_exit
fi
exit "$exit_status"
