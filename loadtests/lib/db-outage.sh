# shellcheck shell=bash
# Sourced by loadtests/run.sh for --db-outage DURATION@AT (ADR 0030): AT seconds after the k6 run starts,
# SIGKILLs the run's database server (a crash, not a clean stop: open connections break, nothing is flushed), and
# DURATION seconds later starts it again with the command line test-support's Launcher started it with
# (DB_COMMAND), so on the same port and data directory (InnoDB recovers on start-up). Meanwhile the API's meters
# are sampled once a second into db-outage.tsv.
#
#   db_outage_parse 15s@20s       sets DB_OUTAGE_FOR and DB_OUTAGE_AT (seconds; s, m or none; lib/cli.py checked it)
#   db_outage_start RUN_DIR       before k6: schedules the outage and starts the sampler (both tracked services)
#   db_outage_finish RUN_DIR      after k6: waits until the database is back (if the run was shorter); the
#                                 restarted server is stopped with the rest
#   loadtests/lib/db_outage_report.py RUN_DIR   the outage's table (answers by status, stale reads, timeline)
#
# Needs scripts/services.sh (start_mariadb's DB_PID, DB_COMMAND, DB_PORT, DB_DIR; service_track, wait_for_port) and
# MGMT_PORT.

DB_OUTAGE_FOR=""
DB_OUTAGE_AT=""

_db_outage_seconds() {
  case $1 in
    *s) echo "${1%s}" ;;
    *m) echo "$((${1%m} * 60))" ;;
    *) echo "$1" ;;
  esac
}

db_outage_parse() {
  DB_OUTAGE_FOR=$(_db_outage_seconds "${1%@*}")
  DB_OUTAGE_AT=$(_db_outage_seconds "${1#*@}")
}

db_outage_start() {
  local dir=$1 pid=${DB_PID:-}
  [[ -n $pid ]] || {
    echo "db-outage: no database server to kill" >&2
    return 1
  }
  local log=$dir/db-outage.log
  : >"$log"
  (
    restarted=""
    # Stopped with the other services (TERM): stop the restarted server cleanly.
    trap 'if [[ -n $restarted ]]; then kill -TERM "$restarted" 2>/dev/null; wait "$restarted"; fi; exit 0' TERM
    sleep "$DB_OUTAGE_AT" &
    wait $!
    kill -KILL "$pid"
    # Gone once its port is closed (test-support's Launcher started it: not this shell's child to wait for).
    while (exec 3<>"/dev/tcp/127.0.0.1/$DB_PORT") 2>/dev/null; do sleep 0.05; done
    echo "killed $(date +%s.%N) pid $pid" >>"$log"
    sleep "$DB_OUTAGE_FOR" &
    wait $!
    _services_rerun "$DB_COMMAND" "$DB_DIR"
    restarted=$!
    if wait_for_port "$DB_PORT" 120 "$restarted"; then
      echo "restarted $(date +%s.%N) pid $restarted" >>"$log"
    else
      echo "restart-failed $(date +%s.%N)" >>"$log"
    fi
    wait "$restarted"
  ) &
  service_track mariadb-restarted $!
  # What the API did, once a second: requests by status, loads, rejections, stale reads, breaker, pool, threads.
  (
    while sleep 1; do
      echo "# $(date +%s.%N)"
      curl -s --max-time 1 "http://127.0.0.1:$MGMT_PORT/actuator/prometheus" |
        grep -E '^(http_server_requests_seconds_count\{|tiered_cache_(stale_served|loads_rejected)_total|tiered_cache_loads_seconds_count|resilience4j_circuitbreaker_state\{.*tiered-cache-loader|resilience4j_bulkhead_available|hikaricp_connections_(active|pending|idle)\{|jetty_threads_busy)' ||
        true
    done
  ) >"$dir/db-outage.samples" 2>/dev/null &
  service_track db-outage-sampler $!
}

db_outage_finish() {
  local dir=$1 deadline=$((SECONDS + 180))
  until grep -q -E '^(restarted|restart-failed)' "$dir/db-outage.log" 2>/dev/null; do
    ((SECONDS < deadline)) || break
    sleep 0.5
  done
  service_stop db-outage-sampler
}
