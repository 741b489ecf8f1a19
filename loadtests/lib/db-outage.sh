# shellcheck shell=bash
# Sourced by loadtests/run.sh for --db-outage DURATION@AT (ADR 0030): AT seconds after the k6 run starts,
# SIGKILLs the run's mariadbd (a crash, not a clean stop: open connections break, nothing is flushed), and
# DURATION seconds later starts it again with the same command line, so on the same port and data directory
# (InnoDB recovers on start-up). Meanwhile the API's meters are sampled once a second into db-outage.tsv.
#
#   db_outage_parse 15s@20s       sets DB_OUTAGE_FOR and DB_OUTAGE_AT (seconds; s, m or none; lib/cli.py checked it)
#   db_outage_start RUN_DIR       before k6: schedules the outage and starts the sampler (both tracked services)
#   db_outage_finish RUN_DIR      after k6: waits until the database is back (if the run was shorter) and
#                                 reaps the killed process; the restarted one is stopped with the rest
#   loadtests/lib/db_outage_report.py RUN_DIR   the outage's table (answers by status, stale reads, timeline)
#
# Needs scripts/services.sh (DB_PORT, DB_DIR, service_track, wait_for_port) and MGMT_PORT.

DB_OUTAGE_FOR=""
DB_OUTAGE_AT=""
_DB_OUTAGE_KILLED_PID=""

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

# The pid run.sh's start_mariadb left in the service list.
_db_outage_mariadb_pid() {
  local i
  for i in "${!_SERVICE_NAMES[@]}"; do
    if [[ ${_SERVICE_NAMES[i]} == mariadb ]]; then
      echo "${_SERVICE_PIDS[i]}"
      return
    fi
  done
}

db_outage_start() {
  local dir=$1 pid
  pid=$(_db_outage_mariadb_pid)
  [[ -n $pid ]] || {
    echo "db-outage: no mariadb service to kill" >&2
    return 1
  }
  _DB_OUTAGE_KILLED_PID=$pid
  local log=$dir/db-outage.log
  : >"$log"
  (
    restarted=""
    # Stopped with the other services (TERM): stop the restarted server cleanly.
    trap 'if [[ -n $restarted ]]; then kill -TERM "$restarted" 2>/dev/null; wait "$restarted"; fi; exit 0' TERM
    mapfile -d '' -t command <"/proc/$pid/cmdline"
    sleep "$DB_OUTAGE_AT" &
    wait $!
    kill -KILL "$pid"
    # The killed server is run.sh's child (a zombie until db_outage_finish reaps it): its port tells.
    while (exec 3<>"/dev/tcp/127.0.0.1/$DB_PORT") 2>/dev/null; do sleep 0.05; done
    echo "killed $(date +%s.%N) pid $pid" >>"$log"
    sleep "$DB_OUTAGE_FOR" &
    wait $!
    "${command[@]}" >>"$DB_DIR/mariadbd.err" 2>&1 &
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
        grep -E '^(http_server_requests_seconds_count\{|tiered_cache_(stale_served|loads_rejected)_total|tiered_cache_loads_seconds_count|resilience4j_circuitbreaker_state\{.*tiered-cache-loader|resilience4j_bulkhead_available|hikaricp_connections_(active|pending|idle)\{|tomcat_threads_busy)' ||
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
  # Reap the killed server, so that stopping the services does not wait for it.
  wait "$_DB_OUTAGE_KILLED_PID" 2>/dev/null || true
}
