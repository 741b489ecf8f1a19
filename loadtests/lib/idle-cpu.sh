#!/usr/bin/env bash
# What the service costs while nobody asks (ADR 0201, "What runs while nobody asks"): a warm API with its Redis and
# MariaDB, left idle after a short run, and the CPU each process (and the API's busiest threads) uses over a window.
# What is left is the scheduled work: the binary-log reader's confirmations, the invalidation listener, the lease.
#
#   loadtests/lib/idle-cpu.sh [LABEL] [SECONDS]     (API_JAR, API_JAVA_OPTS as for run.sh; default 30 s)
#
# Prints one line per process in CPU milliseconds over the window and per second, then the API's threads. The
# JIT's compiler threads are shown apart: they finish compiling the short run's code during the window.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LABEL=${1:-idle}
SECONDS_IDLE=${2:-30}
LOG=$(mktemp)

"$ROOT/loadtests/run.sh" run --slo absolute --duration 20s --rate 300 --keep-running >"$LOG" 2>&1 &
runner=$!
cleanup() {
  kill -TERM "$runner" 2>/dev/null || true
  wait "$runner" 2>/dev/null || true
  rm -f "$LOG"
}
trap cleanup EXIT

for _ in $(seq 1 120); do
  grep -q '^MariaDB ' "$LOG" && break
  kill -0 "$runner" 2>/dev/null || { cat "$LOG" >&2; exit 1; }
  sleep 5
done
# The run's last requests and scrapes settle.
sleep 15

api=$(pgrep -f -- '-jar .*\.jar --spring\.profiles\.active' | head -1)
redis=$(pgrep -f 'redis-server 127.0.0.1' | head -1)
mariadb=$(pgrep -f 'mariadbd --defaults-file=/tmp/concert-cache-mariadb' | head -1)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
thread_ticks() {
  for task in /proc/"$api"/task/*; do
    # A thread may end while it is read.
    printf '%s %s\n' "$(tr ' ' '_' <"$task/comm" 2>/dev/null)" "$(ticks "$api/task/${task##*/}" 2>/dev/null || echo 0)"
  done
}

declare -A before
while read -r name value; do before[$name]=$(( ${before[$name]:-0} + value )); done < <(thread_ticks)
a0=$(ticks "$api"); r0=$(ticks "$redis"); m0=$(ticks "$mariadb")
sleep "$SECONDS_IDLE"
a1=$(ticks "$api"); r1=$(ticks "$redis"); m1=$(ticks "$mariadb")
declare -A after
while read -r name value; do after[$name]=$(( ${after[$name]:-0} + value )); done < <(thread_ticks)

hz=$(getconf CLK_TCK)
jit=0
for name in "${!after[@]}"; do
  if [[ $name == C[12]_Compiler* ]]; then
    jit=$(( jit + after[$name] - ${before[$name]:-0} ))
  fi
done
ms() { echo $(( $1 * 1000 / hz )); }
api_ms=$(ms $(( a1 - a0 - jit )))
printf '%s: over %s s, CPU ms (ms per s): api %s (%s) without the JIT (%s ms), redis %s (%s), mariadb %s (%s), total %s (%s)\n' \
  "$LABEL" "$SECONDS_IDLE" "$api_ms" $(( api_ms / SECONDS_IDLE )) "$(ms "$jit")" \
  "$(ms $(( r1 - r0 )))" $(( $(ms $(( r1 - r0 ))) / SECONDS_IDLE )) \
  "$(ms $(( m1 - m0 )))" $(( $(ms $(( m1 - m0 ))) / SECONDS_IDLE )) \
  $(( api_ms + $(ms $(( r1 - r0 + m1 - m0 ))) )) $(( (api_ms + $(ms $(( r1 - r0 + m1 - m0 )))) / SECONDS_IDLE ))
for name in "${!after[@]}"; do
  delta=$(( after[$name] - ${before[$name]:-0} ))
  if (( delta > 0 )); then
    printf '  %6s ms  %s\n' "$(ms "$delta")" "$name"
  fi
done | sort -rn | head -8
