#!/usr/bin/env bash
# The HTTP servers alone, without the cache (ADR 0208's anchor): the crawled responses of a --ceiling run held in
# memory and answered by nginx (from the files), Tomcat in a valve, Jetty in a blocking and in a non-blocking
# handler; the 1000-VU closed loop against each in turn, ROUNDS rounds of 15 s after a 10 s warm-up each. Prints
# each round's requests per second, its ratio to nginx's round before it, and the server's CPU per request.
#
#   loadtests/bare-servers/run.sh [FILES_DIR] [ROUNDS]
#
# FILES_DIR: a `loadtests/run.sh --ceiling` run's http-limit directory (the newest one by default).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/loadtests/bare-servers
# shellcheck source=../lib/nginx.sh
source "$ROOT/loadtests/lib/nginx.sh"
# shellcheck source=../lib/http-limit.sh
source "$ROOT/loadtests/lib/http-limit.sh"

LIMIT=${1:-$(ls -d "$ROOT"/loadtests/results/*/http-limit 2>/dev/null | sort | tail -n 1)}
ROUNDS=${2:-2}
[[ -d $LIMIT/files ]] || { echo "no crawled responses in '$LIMIT/files': run loadtests/run.sh --ceiling first" >&2; exit 2; }
K6=${K6:-$ROOT/loadtests/.bin/k6}
WORK=$(mktemp -d)
PIDS=()
trap 'for pid in "${PIDS[@]}"; do kill -CONT "$pid" 2>/dev/null; pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done; rm -rf "$WORK"' EXIT

"$ROOT/mvnw" -B -q -f "$HERE/pom.xml" package dependency:copy-dependencies -DoutputDirectory=target/lib
CLASSPATH="$HERE/target/bare-servers-0.1.0-SNAPSHOT.jar:$(echo "$HERE"/target/lib/*.jar | tr ' ' ':')"
# The crawl holds one detail file per concert.
CONCERTS=$(find "$LIMIT/files/api/concerts" -maxdepth 1 -name '[0-9]*.body' | wc -l)
mkdir -p "$WORK/nginx"
ln -s "$(cd "$LIMIT/files" && pwd)" "$WORK/nginx/files"

# start NAME PORT: the server NAME on PORT, in the background; sets PID.
start() {
  local java=(java @"$ROOT/api/jvm.options" -cp "$CLASSPATH")
  case $1 in
    nginx)
      http_limit_conf "$WORK/nginx" "$2" >"$WORK/nginx/nginx.conf"
      "$(nginx_bin)" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' & ;;
    tomcat) "${java[@]}" dev.concertcache.bareservers.TomcatServer "$LIMIT/files" "$2" & ;;
    jetty-blocking) "${java[@]}" dev.concertcache.bareservers.JettyServer "$LIMIT/files" "$2" blocking & ;;
    jetty-non-blocking) "${java[@]}" dev.concertcache.bareservers.JettyServer "$LIMIT/files" "$2" non-blocking & ;;
  esac
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 150); do
    curl -sf -o /dev/null "http://127.0.0.1:$2/api/concerts/1" && return
    sleep 0.2
  done
  echo "$1 did not answer on $2" >&2
  exit 1
}

# cpu_ticks PID: user and system clock ticks of PID and its children (nginx's workers).
cpu_ticks() {
  local pid ticks=0
  for pid in "$1" $(pgrep -P "$1" || true); do
    ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
  done
  echo "$ticks"
}

# k6_round PORT SECONDS SUMMARY: the 1000-VU closed loop against PORT.
k6_round() {
  "$K6" run -q --env "BASE_URL=http://127.0.0.1:$1" --env "CONCERTS=$CONCERTS" --env "RESULTS_DIR=$WORK" \
    --env "DURATION=$2" --summary-export "$3" "$ROOT/loadtests/scenarios/vus-1000.js" >/dev/null 2>&1
}

SERVERS=(nginx tomcat jetty-blocking jetty-non-blocking)
declare -A PID_OF PORT_OF
port=8090
for server in "${SERVERS[@]}"; do
  start "$server" "$port"
  k6_round "$port" 10s "$WORK/warmup.json"
  PID_OF[$server]=$PID
  PORT_OF[$server]=$port
  kill -STOP "$PID"
  pkill -STOP -P "$PID" || true
  port=$((port + 1))
done

printf '%-20s %12s %9s %16s\n' "round" "requests/s" "/ nginx" "CPU per request"
for round in $(seq "$ROUNDS"); do
  nginx_rate=""
  for server in "${SERVERS[@]}"; do
    pid=${PID_OF[$server]}
    kill -CONT "$pid"
    pkill -CONT -P "$pid" || true
    before=$(cpu_ticks "$pid")
    k6_round "${PORT_OF[$server]}" 15s "$WORK/round.json"
    after=$(cpu_ticks "$pid")
    kill -STOP "$pid"
    pkill -STOP -P "$pid" || true
    read -r rate count < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["metrics"]["http_reqs"]; print(m["rate"], m["count"])' "$WORK/round.json")
    [[ -n $nginx_rate ]] || nginx_rate=$rate
    awk -v s="$server-$round" -v r="$rate" -v n="$nginx_rate" -v t=$((after - before)) -v c="$count" -v hz="$(getconf CLK_TCK)" \
      'BEGIN { printf "%-20s %12.0f %8.2fx %13.1f µs\n", s, r, r / n, t * 1e6 / hz / c }'
  done
done
