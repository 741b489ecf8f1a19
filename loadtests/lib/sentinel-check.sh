#!/usr/bin/env bash
# Does the cache work on Redis Sentinel (ADR 0039, "Redis Sentinel")? A real check, not a load test: one primary, one
# replica and one sentinel (quorum 1) on loopback, MariaDB, two API instances (profile cache) pointed at the sentinel
# with spring.data.redis.sentinel.*. A concert title is written through instance a and read from b (the invalidation
# must reach b's L1 within 1 s); then the primary is killed (SIGKILL), the sentinel promotes the replica, and the same
# is checked twice more: right after the promotion and a few seconds later. Everything it started stops at the end.
#
#   loadtests/lib/sentinel-check.sh        (API_JAR: default api/target/api.jar, built by run.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/services.sh
source "$ROOT/scripts/services.sh"
trap stop_services EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

JAR=${API_JAR:-$ROOT/api/target/api.jar}
[[ -f $JAR ]] || { echo "sentinel-check: no $JAR (build it: ./mvnw -q -pl api -am package -DskipTests)" >&2; exit 1; }
OUT=$ROOT/loadtests/results/$(date -u +%Y%m%dT%H%M%SZ)-sentinel-check
mkdir -p "$OUT"
ADMIN_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
CURSOR_SECRET=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')

step() {
  printf '\n==> %s\n' "$*"
}

step "MariaDB, a Redis primary, its replica and a sentinel (loopback)"
start_mariadb
start_redis_sentinel
PRIMARY_PORT=$REDIS_PRIMARY_PORT
REPLICA_PORT=$REDIS_REPLICA_PORT
SENTINEL_PORT=$REDIS_SENTINEL_PORT
echo "primary $PRIMARY_PORT, replica $REPLICA_PORT, sentinel $SENTINEL_PORT (master name $REDIS_SENTINEL_MASTER)"

BACKENDS=("--spring.datasource.url=$DB_JDBC_URL" --spring.datasource.username=concert --spring.datasource.password=concert
  "--spring.data.redis.sentinel.master=$REDIS_SENTINEL_MASTER" "--spring.data.redis.sentinel.nodes=127.0.0.1:$SENTINEL_PORT")
step "loading 200 concerts"
java -jar "$JAR" --spring.profiles.active=generate --concert-cache.generate.concerts=200 --concert-cache.generate.seed=42 \
  "${BACKENDS[@]}" >"$OUT/generate.log" 2>&1

start_instance() {
  local name=$1 port mgmt
  port=$(free_port)
  mgmt=$(free_port)
  while [[ $mgmt == "$port" ]]; do mgmt=$(free_port); done
  CONCERT_CACHE_ADMIN_TOKEN=$ADMIN_TOKEN CONCERT_CACHE_CURSOR_SECRET=$CURSOR_SECRET java "@$ROOT/api/jvm.options" -jar "$JAR" \
    --spring.profiles.active=cache --concert-cache.warmup.max-duration=10s "${BACKENDS[@]}" \
    --server.address=127.0.0.1 "--server.port=$port" --management.server.address=127.0.0.1 \
    "--management.server.port=$mgmt" >"$OUT/api-$name.log" 2>&1 &
  service_track api $!
  service_await_ready $! 180 "$OUT/api-$name.log" curl -sf "http://127.0.0.1:$mgmt/actuator/health/readiness" || {
    echo "sentinel-check: instance $name did not become ready" >&2
    exit 1
  }
  printf -v "PORT_$name" '%s' "$port"
  echo "instance $name on $port"
}
step "two API instances on the sentinel"
start_instance a
start_instance b

# check LABEL: writes concert 7's title through a (retrying while the write fails: Redis may be failing over), then
# reads it from b until b shows it; prints the lag from a's answer to b's first new title, fails past 1 s.
check() {
  python3 - "$1" "$PORT_a" "$PORT_b" "$ADMIN_TOKEN" <<'PY'
import json, sys, time, urllib.request
label, a, b, token = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
def get(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/concerts/7", timeout=5) as r:
        return json.load(r)
for port in (a, b):  # both hold the current value in L1 before the write
    get(port)
concert = get(a)
title = f"sentinel {label} {time.time_ns()}"
body = {k: concert[k] for k in ("artist", "venue", "description", "startDate", "endDate")} | {"title": title}
started = time.monotonic()
while True:
    request = urllib.request.Request(f"http://127.0.0.1:{a}/api/concerts/7", data=json.dumps(body).encode(), method="PUT",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            if r.status == 200:
                break
    except Exception as e:
        if time.monotonic() - started > 30:
            sys.exit(f"{label}: the write failed for 30 s: {e}")
        time.sleep(0.2)
acked = time.monotonic()
own = get(a)["title"]
while True:
    seen = get(b)["title"]
    lag = time.monotonic() - acked
    if seen == title:
        break
    if lag > 5:
        break
    time.sleep(0.01)
ok = own == title and seen == title and lag <= 1.0
print(f"{label}: write acked {acked - started:.2f} s after the first try; a reads {'new' if own == title else 'OLD'}; "
      f"b reads {'new' if seen == title else 'OLD'} {lag * 1000:.0f} ms after the ack: {'ok' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
PY
}

status=0
step "before the failover"
check before | tee -a "$OUT/result.txt" || status=1
step "killing the primary $PRIMARY_PORT (SIGKILL)"
primary_pid=$(redis-cli -p "$PRIMARY_PORT" INFO server | tr -d '\r' | awk -F: '/^process_id:/ { print $2 }')
killed_at=$SECONDS
kill -9 "$primary_pid"
deadline=$((SECONDS + 60))
until [[ $(redis-cli -p "$SENTINEL_PORT" SENTINEL get-master-addr-by-name "$REDIS_SENTINEL_MASTER" 2>/dev/null | sed -n 2p) == "$REPLICA_PORT" ]] &&
  redis-cli -p "$REPLICA_PORT" INFO replication | grep -q '^role:master'; do
  ((SECONDS < deadline)) || { echo "sentinel-check: no promotion within 60 s" | tee -a "$OUT/result.txt"; exit 1; }
  sleep 0.1
done
echo "the sentinel promoted $REPLICA_PORT about $((SECONDS - killed_at)) s after the kill" | tee -a "$OUT/result.txt"
check "right after the promotion" | tee -a "$OUT/result.txt" || status=1
sleep 5
check "5 s later" | tee -a "$OUT/result.txt" || status=1
grep -h -i 'flush\|invalidation stream\|restart' "$OUT"/api-*.log | grep -v DEBUG | tail -n 6 | tee -a "$OUT/result.txt" || true
echo "results: $OUT"
exit "$status"
