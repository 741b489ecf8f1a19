# shellcheck shell=bash
# Sourced by loadtests/run.sh for --freshness: two API instances (profile cache) on the
# same Redis and MariaDB, the users-per-second journey in the background on both (RATE split between them,
# one k6 process each), and lib/freshness.py writing concert titles through either instance (and with
# --sql-writer with plain SQL) while it reads them back from both. With a fault, Redis misbehaves meanwhile:
#
#   redis-clients   CLIENT KILL TYPE normal (on every node of a cluster) every 2 s during the middle third
#   redis-restart   Redis stopped and started again (same port, empty) halfway through
#   primary-kill    with --redis cluster: the primary holding the invalidation stream killed (SIGKILL) halfway
#                   through, its replica promoted; the node started again 10 s later, rejoining as a replica
#   reader-kill     the instance that reads the binary log (holds the capture's lease) killed (SIGKILL) halfway
#                   through, with its load; the other takes the lease over and is measured on alone
#   capture-stall   the binary log cannot be read for the middle third (REPLICATION SLAVE revoked from the
#                   capture's user, its dump connections killed, then granted back): the reader stalls while
#                   both instances serve, and plain SQL writes must be served within 1 s all the same (ADR 0039)
#   rolling-deploy  each instance in turn stopped (SIGTERM: graceful shutdown) and started again on its ports,
#                   the next once it is ready; the background load goes through nginx in front of both, as a
#                   deploy's load balancer routes around the instance it replaces
#
#   freshness_run RUN_DIR     everything above; leaves the exit status in FRESHNESS_STATUS
#   freshness_runs RUN_DIR    freshness_run once per fault of FAULTS (--fault a,b,...) on the same servers, data
#                             set and API instances (their caches emptied between runs, one a fault killed started
#                             again), each in RUN_DIR/<fault>; FRESHNESS_STATUS is the first failing run's
#
# Needs scripts/services.sh, run.sh's start_api, snapshot and its variables (RATE, DURATION, SMOKE, ...).

# Seconds in "45", "45s" or "2m".
_freshness_seconds() {
  case $1 in
    *m) echo "$((${1%m} * 60))" ;;
    *s) echo "${1%s}" ;;
    *) echo "$1" ;;
  esac
}

# The instances: a and b, or a alone with --one-instance (FRESHNESS_ONE_INSTANCE), to compare a fault's database cost
# for one instance and for two.
_freshness_names() {
  if [[ ${FRESHNESS_ONE_INSTANCE:-} == true ]]; then echo a; else echo a b; fi
}

# _freshness_instances: instances a and b of the API (profile cache) on an empty Redis, started side by side on free
# ports and ready; sets PID_<NAME>, PORT_<NAME>, MGMT_<NAME> and _FRESHNESS_STARTED (the names of those started,
# not kept). With FRESHNESS_REUSE, instances of an earlier run that
# are still up are kept and their caches emptied through the API (DELETE /actuator/caches: L1 cleared, every
# generation moved, as the fleet sees it; Redis is not flushed under them), so each run starts on empty caches as a
# fresh pair would; one that run killed is started again on its ports.
_freshness_instances() {
  local name pid_var
  _FRESHNESS_STARTED=()
  if [[ -z ${FRESHNESS_REUSE:-} ]]; then
    _FRESHNESS_PORTS=()
    PID_a="" PID_b="" PORT_a="" PORT_b="" MGMT_a="" MGMT_b=""
    _fleet_flush_redis
  fi
  for name in $(_freshness_names); do
    pid_var=PID_$name
    if [[ -n ${!pid_var} ]] && kill -0 "${!pid_var}" 2>/dev/null; then
      _freshness_evict "$name" || die "could not empty the caches of instance $name"
      continue
    fi
    _freshness_launch "$name" "$([[ $name == a ]] && echo 8080 || echo 8082)"
    _FRESHNESS_STARTED+=("$name")
  done
  for name in "${_FRESHNESS_STARTED[@]}"; do
    pid_var=PID_$name
    local mgmt_var=MGMT_$name
    await_api cache "$RESULTS/api-$name.log" "${!pid_var}" "${!mgmt_var}"
  done
  # Ready, and still running once the other is: on a shared machine another process may take a port between its
  # choice and the JVM's bind, answer the readiness probe, and leave this instance to exit on the bind failure.
  for name in "${_FRESHNESS_STARTED[@]}"; do
    pid_var=PID_$name
    kill -0 "${!pid_var}" 2>/dev/null ||
      { tail -n 20 "$RESULTS/api-$name.log" >&2; die "API instance $name exited; see $RESULTS/api-$name.log"; }
  done
}

# _freshness_launch NAME PREFERRED_PORT: starts instance NAME, on the ports it had when it ran before, else on free
# ones; does not wait for it.
_freshness_launch() {
  local name=$1 preferred=$2 port_var=PORT_$1 mgmt_var=MGMT_$1
  API_PORT=${!port_var:-}
  MGMT_PORT=${!mgmt_var:-}
  if [[ -z $API_PORT ]]; then
    API_PORT=$(free_port "$preferred")
    MGMT_PORT=$(free_port "$((preferred + 1))")
    while [[ " ${_FRESHNESS_PORTS[*]} " == *" $API_PORT "* || " ${_FRESHNESS_PORTS[*]} " == *" $MGMT_PORT "* ||
      $API_PORT == "$MGMT_PORT" ]]; do
      API_PORT=$(free_port)
      MGMT_PORT=$(free_port)
    done
    _FRESHNESS_PORTS+=("$API_PORT" "$MGMT_PORT")
  fi
  step "starting API instance $name (profile cache) on $API_PORT, management $MGMT_PORT"
  API_READY_WITHIN=$($SMOKE || echo 60s) launch_api cache "$RESULTS/api-$name.log"
  printf -v "PID_$name" '%s' "${_SERVICE_PIDS[-1]}"
  printf -v "PORT_$name" '%s' "$API_PORT"
  printf -v "MGMT_$name" '%s' "$MGMT_PORT"
}

# _freshness_evict NAME: every cache of instance NAME emptied (the admin DELETE /actuator/caches), L1 included.
_freshness_evict() {
  local mgmt_var=MGMT_$1 code
  code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $ADMIN_TOKEN" \
    "http://127.0.0.1:${!mgmt_var}/actuator/caches")
  [[ $code == 204 ]] || return 1
  echo "instance $1 kept from the run before (or its warm-up), its caches emptied" | tee -a "$RESULTS/instances.txt"
}

# _freshness_load NAME PORT MGMT DIR JOURNEYS_PER_SECOND: the journey against one instance (or nginx, MGMT
# empty: no instance's counters), in the background.
_freshness_load() {
  local name=$1 port=$2 mgmt=$3 dir=$4 rate=$5
  mkdir -p "$dir"
  MGMT_PORT=$mgmt snapshot "$dir/before"
  local env=(--env "BASE_URL=http://127.0.0.1:$port" --env "CONCERTS=$CONCERTS" --env "RESULTS_DIR=$dir"
    --env "DURATION=${FRESHNESS_SECONDS}s" --env "RATE=$rate" --env "PRE_ALLOCATED_VUS=$rate")
  # A smoke run's load is judged on failed requests and checks only: on two shared cores its latencies and the
  # iterations it could not start on time are the scheduler's (the table still reports them).
  ! $SMOKE || env+=(--env SMOKE=1 --env P95_MS=600000 --env P99_MS=600000 --env MAX_DROPPED=1000000000)
  # Killed connections and a restarted Redis may fail a few misses (ADR 0014 serves from L1 and the database).
  [[ $FAULT == none ]] || env+=(--env MAX_FAILED_RATE=0.01)
  "$K6" run --quiet "${env[@]}" "$ROOT/loadtests/scenarios/users-per-second.js" >"$dir/k6.log" 2>&1 &
  service_track "k6-$name" $!
  printf -v "K6_PID_$name" '%s' "$!"
}

# _freshness_checker DIR FAULT [FLAG...]: lib/freshness.py writing and reading back for FRESHNESS_SECONDS against
# the instances, in the background; sets _FRESHNESS_CHECKER_PID.
_freshness_checker() {
  local dir=$1 fault=$2 name port_var
  shift 2
  local checker=(python3 "$ROOT/loadtests/lib/freshness.py" run --out "$dir")
  for name in $(_freshness_names); do
    port_var=PORT_$name
    checker+=(--instance "$name=http://127.0.0.1:${!port_var}")
  done
  checker+=(--token="$ADMIN_TOKEN" --duration "$FRESHNESS_SECONDS" --fault "$fault" --fault-log "$dir/fault.log")
  ! $SQL_WRITER || checker+=(--sql-client
    "mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P$DB_PORT -uconcert -pconcert concert_cache")
  # shellcheck disable=SC2206 # FRESHNESS_OPTS is a list of checker flags
  checker+=(${FRESHNESS_OPTS:-} "$@")
  mkdir -p "$dir"
  : >"$dir/fault.log"
  rm -f "$dir/started"
  "${checker[@]}" >"$dir/checker.log" 2>&1 &
  _FRESHNESS_CHECKER_PID=$!
  service_track checker "$_FRESHNESS_CHECKER_PID"
}

# _freshness_warmup DIR JOURNEYS_PER_SECOND: the run's load and writers on freshly started instances for
# FRESHNESS_WARMUP, not judged, then their caches emptied and the titles reset. A run measures the lags of a pair
# that has been serving: the paths of a write (the binary log's reader, the landing, the listener) compiled, not
# interpreted; a cold instance's lags are what rolling-deploy measures.
_freshness_warmup() {
  local dir=$1 rate=$2 names name port_var pid_var
  read -ra names <<<"$(_freshness_names)"
  local half=$(((rate + ${#names[@]} - 1) / ${#names[@]}))
  local FRESHNESS_SECONDS
  FRESHNESS_SECONDS=$(_freshness_seconds "$FRESHNESS_WARMUP")
  step "freshness: warming the instances for $FRESHNESS_SECONDS s at $rate journeys/s, writers on (not reported)"
  for name in "${names[@]}"; do
    port_var=PORT_$name
    _freshness_load "$name" "${!port_var}" "" "$dir/load-$name" "$half"
  done
  _freshness_checker "$dir" none --lag-p99-ms none --sql-lag-p99-ms none
  wait "$_FRESHNESS_CHECKER_PID" || true
  service_stop checker
  for name in "${names[@]}"; do
    pid_var=K6_PID_$name
    wait "${!pid_var}" || true
    service_stop "k6-$name"
    _freshness_evict "$name" || die "could not empty the caches of instance $name after its warm-up"
  done
  _freshness_reset_titles
}

# The checker reads versions from titles "fresh-<id>-<version>": the last run's would pass for new writes.
_freshness_reset_titles() {
  _freshness_sql "UPDATE concert_cache.concert SET title = CONCAT('concert-', id), updated_at = UTC_TIMESTAMP(3)
    WHERE title LIKE 'fresh-%'" || die "could not reset the titles the last freshness run wrote"
}

# _freshness_started DIR: waits until the checker has started its clock (faults are timed from it).
_freshness_started() {
  local deadline=$((SECONDS + 120))
  until [[ -f $1/started ]] || ((SECONDS > deadline)); do
    sleep 0.1
  done
}

# _freshness_redeploy NAME DIR: instance NAME stopped gracefully and started again on the same ports, ready.
_freshness_redeploy() {
  local name=$1 log=$2/fault.log pid_var=PID_$1 port_var=PORT_$1 mgmt_var=MGMT_$1
  local pid=${!pid_var} deadline=$((SECONDS + 60))
  kill -TERM "$pid"
  # "out of rotation" / "back in rotation": lib/freshness.py counts the writes in between as "down" there.
  echo "$(date +%s.%N) instance $name out of rotation: stopped (SIGTERM: graceful shutdown)" >>"$log"
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
    sleep 0.1
  done
  echo "$(date +%s.%N) instance $name exited" >>"$log"
  API_PORT=${!port_var} MGMT_PORT=${!mgmt_var} start_api cache "$RESULTS/api-$name-redeployed.log"
  printf -v "PID_$name" '%s' "${_SERVICE_PIDS[-1]}"
  echo "$(date +%s.%N) instance $name back in rotation: ready again (same ports)" >>"$log"
}

_freshness_fault() {
  local dir=$1 log=$1/fault.log third=$((FRESHNESS_SECONDS / 3))
  case $FAULT in
    redis-clients)
      (
        _freshness_started "$dir"
        sleep "$third"
        local until=$((SECONDS + third))
        local port killed
        while ((SECONDS < until)); do
          killed=0
          for port in ${REDIS_CLUSTER_PORTS:-$REDIS_PORT}; do
            killed=$((killed + $(redis-cli -p "$port" CLIENT KILL TYPE normal 2>/dev/null || echo 0)))
          done
          echo "$(date +%s.%N) CLIENT KILL TYPE normal: $killed killed" >>"$log"
          sleep 2
        done
      ) &
      service_track fault $!
      ;;
    capture-stall)
      (
        _freshness_started "$dir"
        sleep "$third"
        _freshness_sql "REVOKE REPLICATION SLAVE ON *.* FROM $_FRESHNESS_CAPTURE_USERS"
        local until=$((SECONDS + third)) killed
        # Killed again each second: a reconnect that raced the REVOKE reads on otherwise.
        while ((SECONDS < until)); do
          killed=0
          for id in $(_freshness_sql "SELECT id FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"); do
            _freshness_sql "KILL $id" && killed=$((killed + 1))
          done
          echo "$(date +%s.%N) binary log not readable: $killed dump connections killed" >>"$log"
          sleep 1
        done
        _freshness_sql "GRANT REPLICATION SLAVE ON *.* TO $_FRESHNESS_CAPTURE_USERS"
        echo "$(date +%s.%N) binary log readable again (REPLICATION SLAVE granted)" >>"$log"
      ) &
      service_track fault $!
      ;;
  esac
}

# The capture's user on loopback, as test-support's DatabaseServer makes it (TCP and socket).
_FRESHNESS_CAPTURE_USERS="'concert'@'127.0.0.1', 'concert'@'localhost'"

# Runs one statement as root on the runner's MariaDB; prints the rows, tab-separated, without headers.
_freshness_sql() {
  mariadb --no-defaults --socket="$DB_SOCKET" -uroot -N -B -e "$1" 2>/dev/null
}

freshness_run() {
  local dir=$1
  local default_seconds=60
  $SMOKE && default_seconds=15
  # Two restarts, each a JVM start and a JIT warm-up (up to 60 s, 2 s in a smoke run), should end before the checker
  # does; on a busy machine a smoke run's second restart may end after it: that run checks one whole restart and the
  # other instance's shutdown.
  [[ $FAULT != rolling-deploy ]] || default_seconds=$($SMOKE && echo 60 || echo 300)
  FRESHNESS_SECONDS=$(_freshness_seconds "${DURATION:-$default_seconds}")
  local rate=${RATE:-$($SMOKE && echo 20 || echo 1000)}
  local names name port_var mgmt_var
  read -ra names <<<"$(_freshness_names)"
  local half=$(((rate + ${#names[@]} - 1) / ${#names[@]}))
  _freshness_instances
  if ((${#_FRESHNESS_STARTED[@]} > 0)) && ! $SMOKE && [[ $FRESHNESS_WARMUP != 0* ]]; then
    _freshness_warmup "$dir/warmup" "$rate"
  fi

  local loads=("${names[@]}")
  if [[ $FAULT == rolling-deploy ]]; then
    loads=(nginx)
    FLEET_API_PORTS=("$PORT_a" "$PORT_b")
    NGINX_PORT=$(free_port 8084)
    _fleet_start_nginx || die "nginx did not start"
    step "freshness: ${FRESHNESS_SECONDS} s, $rate journeys/s in the background through nginx on $NGINX_PORT, fault $FAULT"
    _freshness_load nginx "$NGINX_PORT" "" "$dir/load-nginx" "$rate"
  else
    step "freshness: ${FRESHNESS_SECONDS} s, $rate journeys/s in the background ($half on each instance), fault $FAULT"
    for name in "${names[@]}"; do
      port_var=PORT_$name
      mgmt_var=MGMT_$name
      _freshness_load "$name" "${!port_var}" "${!mgmt_var}" "$dir/load-$name" "$half"
    done
  fi
  start_sampler "$dir/redis-clients.tsv"
  _freshness_checker "$dir" "$FAULT"
  local checker_pid=$_FRESHNESS_CHECKER_PID
  _freshness_fault "$dir"
  if [[ $FAULT == redis-restart ]]; then
    # In this shell: restart_redis replaces the tracked redis-server.
    _freshness_started "$dir"
    sleep "$((FRESHNESS_SECONDS / 2))"
    echo "$(date +%s.%N) Redis stopped (SIGTERM)" >>"$dir/fault.log"
    restart_redis || echo "$(date +%s.%N) Redis did not come back" >>"$dir/fault.log"
    echo "$(date +%s.%N) Redis started again, empty" >>"$dir/fault.log"
  elif [[ $FAULT == primary-kill ]]; then
    # In this shell: the restarted node is tracked with the others.
    _freshness_started "$dir"
    sleep "$((FRESHNESS_SECONDS / 2))"
    local primary
    primary=$(redis_cluster_fault_primary "$FAULT_PRIMARY")
    redis_cluster_kill "$primary"
    echo "$(date +%s.%N) primary 127.0.0.1:$primary killed (SIGKILL)" >>"$dir/fault.log"
    redis_cluster_await_ok 30 && echo "$(date +%s.%N) cluster ok again: a replica took over" >>"$dir/fault.log"
    sleep 10
    redis_cluster_restart "$primary" &&
      echo "$(date +%s.%N) 127.0.0.1:$primary started again (rejoins as a replica)" >>"$dir/fault.log"
  fi
  local name k6_status worst_k6=0 pid_var mgmt_var killed=""
  if [[ $FAULT == rolling-deploy ]]; then
    # In this shell: the restarted instances are tracked with the others. A sixth in, so that both restarts
    # (each a JIT warm-up) end well before the checker does.
    _freshness_started "$dir"
    sleep "$((FRESHNESS_SECONDS / 6))"
    _freshness_redeploy a "$dir"
    _freshness_redeploy b "$dir"
  elif [[ $FAULT == reader-kill ]]; then
    _freshness_started "$dir"
    sleep "$((FRESHNESS_SECONDS / 2))"
    for name in a b; do
      mgmt_var=MGMT_$name
      # Not piped into grep -q: under pipefail, curl's SIGPIPE would fail the match.
      [[ $(curl -sf "http://127.0.0.1:${!mgmt_var}/actuator/prometheus") == *$'\nconcert_cache_capture_leader 1.0'* ]] &&
        killed=$name
    done
    if [[ -n $killed ]]; then
      pid_var=PID_$killed
      kill -KILL "${!pid_var}"
      echo "$(date +%s.%N) instance $killed out of rotation: the binary log's reader, killed (SIGKILL)" >>"$dir/fault.log"
      pid_var=K6_PID_$killed
      kill "${!pid_var}" 2>/dev/null || true
    else
      # Not in the fault log: a run with an empty one fails (the fault never struck).
      echo "reader-kill: no instance reads the binary log, nothing killed" >&2
    fi
  fi
  FRESHNESS_STATUS=0
  wait "$checker_pid" || FRESHNESS_STATUS=$?
  for name in "${loads[@]}"; do
    pid_var=K6_PID_$name
    mgmt_var=MGMT_$name
    k6_status=0
    wait "${!pid_var}" || k6_status=$?
    # The killed instance's load ended with it; the fault is what is measured, not that load. A rolling deploy's
    # load meets each new instance cold, its JIT warming under the load nginx sends it meanwhile (nginx has no
    # readiness probe): its SLOs are printed, the freshness checker judges.
    [[ $k6_status == 0 || $name == "$killed" || $FAULT == rolling-deploy ]] || worst_k6=$k6_status
    [[ $name == "$killed" ]] || MGMT_PORT=${!mgmt_var:-} snapshot "$dir/load-$name/after" || true
    cat >"$dir/load-$name/meta.txt" <<META
scenario=users-per-second
profile=cache ($([[ $name == nginx ]] && echo "both instances, through nginx" || echo "instance $name"))
concerts=$CONCERTS
duration=${FRESHNESS_SECONDS}s
rate=$([[ $name == nginx ]] && echo "$rate" || echo "$half")
smoke=$SMOKE
k6_exit=$k6_status
META
  done
  service_stop fault
  service_stop sampler
  [[ $FAULT != rolling-deploy ]] || service_stop nginx
  cat >"$dir/meta.txt" <<META
freshness=true
fault=$FAULT
sql_writer=$SQL_WRITER
duration=${FRESHNESS_SECONDS}s
rate=$rate
smoke=$SMOKE
checker_opts=${FRESHNESS_OPTS:-}
checker_exit=$FRESHNESS_STATUS
k6_exit=$worst_k6
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
META
  step "background load"
  for name in "${loads[@]}"; do
    echo "$([[ $name == nginx ]] && echo "both instances, through nginx" || echo "instance $name"):"
    if [[ $name == "$killed" ]]; then
      echo "  killed halfway through (reader-kill)"
      continue
    fi
    python3 "$ROOT/loadtests/lib/report.py" table "$dir/load-$name" | tee "$dir/load-$name/table.txt" |
      sed -n '1,/^  errors/p'
  done
  step "freshness"
  cat "$dir/checker.log"
  # The checker's verdict first; a clean checker with a background load that missed its SLOs still fails.
  [[ $FRESHNESS_STATUS != 0 ]] || FRESHNESS_STATUS=$worst_k6
}

freshness_runs() {
  if ((${#FAULTS[@]} == 1)); then
    FAULT=${FAULTS[0]}
    freshness_run "$1"
    return
  fi
  local status=0 verdicts=() RESULTS
  for FAULT in "${FAULTS[@]}"; do
    # The logs of instances started for a run go with it (_freshness_launch writes to RESULTS).
    RESULTS=$1/$FAULT
    mkdir -p "$RESULTS"
    _freshness_reset_titles
    freshness_run "$RESULTS"
    # The instances serve the next run too (a pair's start and JIT warm-up is most of a smoke run's time).
    FRESHNESS_REUSE=1
    service_stop checker
    local name
    for name in a b nginx; do
      service_stop "k6-$name"
    done
    verdicts+=("$FAULT: exit $FRESHNESS_STATUS")
    [[ $status != 0 ]] || status=$FRESHNESS_STATUS
  done
  step "freshness, every fault"
  printf '  %s\n' "${verdicts[@]}" | tee "$1/verdicts.txt"
  FRESHNESS_STATUS=$status
}
