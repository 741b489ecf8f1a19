# shellcheck shell=bash
# Sourced by loadtests/run.sh for --instances N and --redis standalone|cluster: N API instances
# (distinct ports, each started after the previous one is ready) behind nginx with upstream keepalive, on one
# standalone Redis or on a Redis Cluster (3 primaries + 3 replicas, scripts/services.sh), the scenario replayed
# against nginx, and a table for the whole fleet plus one row per instance (lib/fleet.py).
#
# --topology-compare runs the same fleet on a standalone Redis and on the cluster in turn (both started at the
# beginning, fresh instances each round); --fault primary-kill (with --redis cluster) kills the primary holding the
# invalidation stream halfway through the load and restarts it later, each request tagged with its 5 s window.
#
#   fleet_active              true when --instances, --redis or --topology-compare was given
#   fleet_ensure_nginx        installs nginx when missing and needed (which options go together: lib/cli.py)
#   fleet_start_redis         standalone or cluster (both for --topology-compare); sets REDIS_ARGS (the API's
#                             spring.data.redis.* flags)
#   fleet_main RUN_DIR        one fleet run (fleet_run) or the topology comparison; leaves the status in FLEET_STATUS
#   fleet_run RUN_DIR         one fleet run; leaves k6's exit status in FLEET_STATUS
#
# With --join: the floor is measured first; the fleet starts with INSTANCES-1 instances, k6 runs in the
# background, and JOIN_AFTER into it the last instance starts and nginx is reloaded with it. nginx logs each
# request's upstream and time; lib/fleet.py join compares the joiner's first minute with the others' and the
# floor's (join.txt).
#
# Needs scripts/services.sh, lib/nginx.sh, run.sh's start_api, run_k6, die, step and its variables (PROFILE, SMOKE, ...).

# --topology-compare: every cluster run sits between two standalone runs, so its ratio is to their mean and the
# machine's drift over the rounds shows (as --ceiling and --capture-compare do).
FLEET_TOPOLOGY_ROUNDS=(standalone-1 cluster-1 standalone-2 cluster-2 standalone-3)
FLEET_TOPOLOGY_ROUNDS_SMOKE=(standalone-1 cluster-1 standalone-2)
# --fault primary-kill on a fleet: the width of the windows requests are tagged with, how long after the promotion
# the failover window lasts, and how long after the promotion the killed node is started again.
FLEET_FAULT_WINDOW_SECONDS=${FLEET_FAULT_WINDOW_SECONDS:-5}
FLEET_FAULT_SETTLE_SECONDS=${FLEET_FAULT_SETTLE_SECONDS:-5}
FLEET_FAULT_RESTART_SECONDS=${FLEET_FAULT_RESTART_SECONDS:-10}

fleet_active() {
  [[ -n ${INSTANCES:-} || -n ${REDIS_MODE:-} ]] || ${TOPOLOGY_COMPARE:-false}
}

# nginx, installed when missing, for a fleet and for --fault rolling-deploy (FAULTS, any of them).
fleet_ensure_nginx() {
  if { fleet_active || [[ " ${FAULTS[*]} " == *" rolling-deploy "* ]]; } && ! command -v nginx >/dev/null &&
    [[ ! -x /usr/sbin/nginx ]]; then
    step "installing nginx"
    "$ROOT/scripts/install-deps.sh" nginx || die "could not install nginx"
  fi
}

# Starts Redis as --redis says (standalone when not given) and sets REDIS_ARGS for the API; for --topology-compare
# a standalone server and a cluster, the standalone one in use (_fleet_use_topology switches).
fleet_start_redis() {
  if ${TOPOLOGY_COMPARE:-false}; then
    start_redis || return 1
    FLEET_STANDALONE_PORT=$REDIS_PORT
    start_redis_cluster || return 1
    FLEET_CLUSTER_PORT=$REDIS_PORT
    echo "Redis standalone 127.0.0.1:$FLEET_STANDALONE_PORT and Redis Cluster ${REDIS_CLUSTER_NODES//,/ }"
    _fleet_use_topology standalone
    return
  fi
  if [[ ${REDIS_MODE:-standalone} == cluster ]]; then
    start_redis_cluster || return 1
    REDIS_ARGS=("--spring.data.redis.cluster.nodes=$REDIS_CLUSTER_NODES")
    echo "Redis Cluster ${REDIS_CLUSTER_NODES//,/ } (3 primaries, 3 replicas)"
  else
    start_redis || return 1
    REDIS_ARGS=(--spring.data.redis.host=127.0.0.1 "--spring.data.redis.port=$REDIS_PORT")
  fi
}

# _fleet_use_topology standalone|cluster: the next fleet_run's Redis (--topology-compare): REDIS_MODE, REDIS_PORT,
# REDIS_ARGS and the Redis flags in run.sh's BACKENDS.
_fleet_use_topology() {
  REDIS_MODE=$1
  if [[ $1 == cluster ]]; then
    REDIS_PORT=$FLEET_CLUSTER_PORT
    REDIS_ARGS=("--spring.data.redis.cluster.nodes=$REDIS_CLUSTER_NODES")
  else
    REDIS_PORT=$FLEET_STANDALONE_PORT
    REDIS_ARGS=(--spring.data.redis.host=127.0.0.1 "--spring.data.redis.port=$REDIS_PORT")
  fi
  local arg kept=()
  for arg in "${BACKENDS[@]}"; do
    [[ $arg == --spring.data.redis.* ]] || kept+=("$arg")
  done
  BACKENDS=("${kept[@]}" "${REDIS_ARGS[@]}")
}

_fleet_flush_redis() {
  if [[ ${REDIS_MODE:-standalone} == cluster ]]; then
    redis_cluster_call FLUSHALL >/dev/null
  else
    redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
  fi
}

_fleet_redis_info() {
  if [[ ${REDIS_MODE:-standalone} == cluster ]]; then
    redis_cluster_info "$1"
  else
    redis-cli -p "$REDIS_PORT" INFO | tr -d '\r' >"$1"
  fi
}

# _fleet_take_port PREFERRED: sets FLEET_PORT to PREFERRED if it can be bound now, else to another free port,
# never one handed out before in this run (FLEET_PORTS; an instance binds its ports only once it starts).
_fleet_take_port() {
  FLEET_PORT=$(free_port "$1")
  while [[ " ${FLEET_PORTS[*]} " == *" $FLEET_PORT "* ]]; do
    FLEET_PORT=$(free_port)
  done
  FLEET_PORTS+=("$FLEET_PORT")
}

# Starts instances 1..INSTANCES one after the other, each ready before the next starts (their JIT warm-ups
# would otherwise compete for the two cores and each take longer); sets FLEET_API_PORTS and FLEET_MGMT_PORTS.
_fleet_start_instances() {
  local dir=$1 count=${2:-$INSTANCES} i
  FLEET_API_PORTS=()
  FLEET_MGMT_PORTS=()
  for ((i = 1; i <= count; i++)); do
    _fleet_start_instance "$dir" "$i"
  done
}

# _fleet_start_instance RUN_DIR I: instance I on free ports, ready; appended to FLEET_API_PORTS/FLEET_MGMT_PORTS.
_fleet_start_instance() {
  local dir=$1 i=$2
  # Ports the kernel picks, not 8082, 8083, ...: another run on this machine prefers those, and an API
  # that lost the race for its port would look ready through the other run's API until it exits.
  _fleet_take_port 0
  API_PORT=$FLEET_PORT
  _fleet_take_port 0
  MGMT_PORT=$FLEET_PORT
  step "starting API instance $i of $INSTANCES (profile $PROFILE) on $API_PORT, management $MGMT_PORT"
  start_api "$PROFILE" "$dir/api-$i.log"
  kill -0 "${_SERVICE_PIDS[-1]}" 2>/dev/null || die "API instance $i exited; see $dir/api-$i.log"
  FLEET_API_PORTS+=("$API_PORT")
  FLEET_MGMT_PORTS+=("$MGMT_PORT")
}

# nginx on NGINX_PORT in front of the instances, its config, logs and temp files in a throwaway directory.
_fleet_start_nginx() {
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/concert-cache-nginx.XXXXXX") || return 1
  FLEET_NGINX_DIR=$dir
  _fleet_nginx_conf "$dir"
  nginx_start nginx "$dir" "$dir" wait_for_port "$NGINX_PORT" 1 || return 1
  cp "$dir/nginx.conf" "$RESULTS/nginx.conf"
}

# _fleet_nginx_conf DIR: DIR/nginx.conf with every instance of FLEET_API_PORTS upstream; with --join each
# request's end time, upstream and time go to RESULTS/upstream.log.
_fleet_nginx_conf() {
  local dir=$1 port servers="" access_log="access_log off;"
  if ${JOIN:-false}; then
    access_log="log_format join '\$msec \$upstream_addr \$request_time \$status';
  access_log $RESULTS/upstream.log join buffer=256k flush=1s;"
  fi
  for port in "${FLEET_API_PORTS[@]}"; do
    servers+="    server 127.0.0.1:$port max_fails=0;"$'\n'
  done
  {
    cat <<NGINX
# Generated by loadtests/lib/fleet.sh for one run; compose's equivalent is ops/nginx/nginx.conf.
# One worker: a proxy of small JSON responses needs a fraction of a core at these rates (seed 001 gave
# nginx 0.4 CPU), and the two cores are shared with the instances and k6.
NGINX
    nginx_conf_head "$dir" 1
    cat <<NGINX
  $access_log
  # k6 keeps its connections open too; an idle one is closed after this.
  keepalive_timeout 65s;
  keepalive_requests 100000;
  upstream api {
    # Round robin: each instance gets a third of the requests, so per-instance hit ratios compare.
$servers
    # Idle connections to the instances kept open per worker (seed 001: 32); at 1000 journeys/s a few dozen
    # requests are in flight at once. Closed by nginx before Jetty's idle timeout (30 s) could close them
    # under a request being sent.
    keepalive 64;
    keepalive_timeout 15s;
  }
  server {
    listen 127.0.0.1:$NGINX_PORT backlog=4096;
    location / {
      proxy_pass http://api;
      include $ROOT/ops/nginx/proxy.conf;
    }
  }
}
NGINX
  } >"$dir/nginx.conf"
}

# --join: JOIN_AFTER into the k6 run (in the background), the last instance starts; nginx reloads with it. The
# joiner starts at niceness JOIN_NICE: its JIT warm-up (up to 1.5 cores for a minute and more, ADR 0202) then
# compiles on the CPU the serving instances leave instead of taking half of it; the request-rate cap of the
# warm-up does not bound the compiler threads. Once ready it serves at niceness 0 like the others.
_fleet_join_run() {
  local dir=$1 k6_pid task
  ( run_k6 "$dir"; echo "$K6_STATUS" >"$dir/k6.status" ) &
  k6_pid=$!
  service_track k6 "$k6_pid"
  sleep "${JOIN_AFTER:-$($SMOKE && echo 5s || echo 30s)}"
  date +%s.%N >"$dir/join-start.txt"
  API_NICE=${JOIN_NICE:-10} _fleet_start_instance "$dir" "$INSTANCES"
  # Every thread: niceness is per thread on Linux and each took the JVM's at its start.
  for task in /proc/"${_SERVICE_PIDS[-1]}"/task/*; do
    renice -n 0 -p "${task##*/}" >/dev/null 2>&1 || true
  done
  # The joiner's counters from its readiness (the fleet's sum in before/ is the others', rewritten after).
  _fleet_snapshot "$dir/joiner" before "$INSTANCES"
  mkdir -p "$dir/instances/api-$INSTANCES"
  cp -r "$dir/joiner/instances/api-$INSTANCES/before" "$dir/instances/api-$INSTANCES/"
  API_PORT=$NGINX_PORT
  MGMT_PORT=${FLEET_MGMT_PORTS[0]}
  _fleet_nginx_conf "$FLEET_NGINX_DIR"
  "$(nginx_bin)" -p "$FLEET_NGINX_DIR" -c "$FLEET_NGINX_DIR/nginx.conf" -s reload ||
    die "nginx did not reload with the joining instance"
  date +%s.%N >"$dir/join-time.txt"
  step "instance $INSTANCES joined on ${FLEET_API_PORTS[-1]}; nginx reloaded"
  wait "$k6_pid" || true
  K6_STATUS=$(cat "$dir/k6.status" 2>/dev/null || echo 1)
}

# _fleet_snapshot RUN_DIR PHASE (before, after): each instance's scrape in RUN_DIR/instances/api-N/PHASE/ (a
# run directory of its own for report.py), their sum in RUN_DIR/PHASE/prometheus.txt (what report.py's table
# of the whole fleet reads), MariaDB's status and Redis INFO (summed over the nodes of a cluster).
_fleet_snapshot() {
  local run=$1 phase=$2 i dir scrapes=() now
  now=$(date +%s.%N)
  mkdir -p "$run/$phase"
  echo "$now" >"$run/$phase/time.txt"
  for ((i = ${3:-1}; i <= ${#FLEET_MGMT_PORTS[@]}; i++)); do
    dir=$run/instances/api-$i/$phase
    mkdir -p "$dir"
    echo "$now" >"$dir/time.txt"
    curl -sf "http://127.0.0.1:${FLEET_MGMT_PORTS[i - 1]}/actuator/prometheus" >"$dir/prometheus.txt" ||
      echo "run.sh: warning: could not scrape instance $i's /actuator/prometheus" >&2
    scrapes+=("$dir/prometheus.txt")
  done
  python3 "$ROOT/loadtests/lib/fleet.py" sum "${scrapes[@]}" >"$run/$phase/prometheus.txt"
  mariadb --no-defaults --socket="$DB_SOCKET" -uroot -N -B \
    -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Questions', 'Max_used_connections')" \
    >"$run/$phase/mariadb.tsv"
  _fleet_redis_info "$run/$phase/redis.txt"
  local port
  for port in $(_fleet_redis_ports); do
    redis-cli -p "$port" INFO commandstats 2>/dev/null | tr -d '\r' >"$run/$phase/commandstats.$port" || true
  done
}

_fleet_redis_ports() {
  if [[ ${REDIS_MODE:-standalone} == cluster ]]; then
    echo "$REDIS_CLUSTER_PORTS"
  else
    echo "$REDIS_PORT"
  fi
}

# Redis connected_clients once a second, summed over the nodes of a cluster (report.py reads the peak).
_fleet_start_sampler() {
  (
    local file
    file=$(mktemp)
    while sleep 1; do
      _fleet_redis_info "$file"
      printf '%s %s\n' "$(date +%s)" "$(sed -n 's/^connected_clients://p' "$file")"
    done
  ) >"$1" 2>/dev/null &
  service_track sampler $!
}

fleet_run() {
  local dir=$1 i
  mkdir -p "$dir"
  INSTANCES=${INSTANCES:-1}
  FLEET_PORTS=()
  _fleet_flush_redis
  if ${JOIN:-false}; then
    start_floor "$dir/floor.log"
    floor_round floor "$dir/floor"
    service_stop floor
    # The join plus a minute: the joiner takes up to a minute or more to be ready on shared cores.
    DURATION=${DURATION:-$($SMOKE && echo 60s || echo 3m)}
    _fleet_start_instances "$dir" $((INSTANCES - 1))
  else
    _fleet_start_instances "$dir"
  fi
  # Taken now, not before the instances start: 8080 could be another run's by then.
  _fleet_take_port 8080
  NGINX_PORT=$FLEET_PORT
  step "starting nginx on $NGINX_PORT in front of ${#FLEET_API_PORTS[@]} instance(s)"
  _fleet_start_nginx || die "nginx did not start"
  # k6 and the --keep-running notes go through nginx; the dashboard link is instance 1's.
  API_PORT=$NGINX_PORT
  MGMT_PORT=${FLEET_MGMT_PORTS[0]}

  # Writes (--writes) go to instance 1 past nginx: a read-back through nginx may reach another instance, which may
  # serve the old value for up to 1 s by contract.
  WRITE_BASE_URL=http://127.0.0.1:${FLEET_API_PORTS[0]}

  step "running $SCENARIO against nginx and $INSTANCES instance(s) (profile $PROFILE, Redis ${REDIS_MODE:-standalone})"
  _fleet_snapshot "$dir" before
  _fleet_start_sampler "$dir/redis-clients.tsv"
  if ${JOIN:-false}; then
    _fleet_join_run "$dir"
  elif [[ ${FAULT:-none} == primary-kill ]]; then
    WINDOW_SECONDS=$FLEET_FAULT_WINDOW_SECONDS K6_BACKGROUND=1 run_k6 "$dir"
    _fleet_primary_kill "$dir"
    wait "$K6_PID" || K6_STATUS=$?
    service_stop k6
  else
    run_k6 "$dir"
  fi
  service_stop sampler
  _fleet_snapshot "$dir" after
  FLEET_STATUS=$K6_STATUS
  cat >"$dir/meta.txt" <<EOF
scenario=$SCENARIO
profile=${FLEET_LABEL:-$PROFILE}
fault=${FAULT:-none}
fault_primary=$([[ ${FAULT:-none} == primary-kill ]] && echo "$FAULT_PRIMARY" || echo none)
window_seconds=$([[ ${FAULT:-none} == primary-kill ]] && echo "$FLEET_FAULT_WINDOW_SECONDS" || echo 0)
settle_seconds=$FLEET_FAULT_SETTLE_SECONDS
writes=${WRITES:-0}
instances=$INSTANCES
redis=${REDIS_MODE:-standalone}
redis_nodes=${REDIS_CLUSTER_NODES:-127.0.0.1:$REDIS_PORT}
nginx=127.0.0.1:$NGINX_PORT
api_ports=${FLEET_API_PORTS[*]}
management_ports=${FLEET_MGMT_PORTS[*]}
concerts=$CONCERTS
duration=${DURATION:-default}
rate=${RATE:-default}
smoke=$SMOKE
jdk25=$JDK25
standin=$STANDIN
k6_exit=$K6_STATUS
k6=$("$K6" version | head -n 1)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
dashboard=http://127.0.0.1:$MGMT_PORT/dashboard
EOF
  # Connections, memory per entry and invalidation traffic, while the instances still hold their connections.
  # shellcheck disable=SC2046 # one argument per node
  python3 "$ROOT/loadtests/lib/footprint.py" measure "$dir" $(_fleet_redis_ports) >"$dir/footprint.txt" 2>&1 ||
    echo "run.sh: warning: no Redis footprint; see $dir/footprint.txt" >&2
  step "results"
  {
    python3 "$ROOT/loadtests/lib/report.py" table "$dir"
    echo
    python3 "$ROOT/loadtests/lib/fleet.py" instances "$dir"
    if [[ ${FAULT:-none} == primary-kill ]]; then
      echo
      python3 "$ROOT/loadtests/lib/fleet.py" failover "$dir"
    fi
  } | tee "$dir/table.txt"
  if ${JOIN:-false}; then
    echo
    python3 "$ROOT/loadtests/lib/fleet.py" join "$dir" "127.0.0.1:${FLEET_API_PORTS[-1]}" | tee "$dir/join.txt"
  fi
  if [[ ${FAULT:-none} == primary-kill ]] && [[ $FLEET_STATUS == 0 ]]; then
    python3 "$ROOT/loadtests/lib/fleet.py" failover "$dir" >/dev/null || FLEET_STATUS=$?
  fi
}

# Seconds of the load: --duration, or the scenario's default (60 s; 5 s in smoke mode).
_fleet_load_seconds() {
  local d=${DURATION:-$($SMOKE && echo 5s || echo 60s)}
  case $d in
    *m) echo "$((${d%m} * 60))" ;;
    *s) echo "${d%s}" ;;
    *) echo "$d" ;;
  esac
}

# _fleet_primary_kill RUN_DIR: in this shell (the restarted node is tracked with the others), while k6 runs in the
# background: waits for the load's first iteration (k6's REST API), kills the primary FAULT_PRIMARY names (run.sh)
# halfway through the load, notes when the cluster is ok again (a replica promoted) and starts the node again
# FLEET_FAULT_RESTART_SECONDS later. Every step in RUN_DIR/fault.log as "epoch event" (lib/fleet.py failover).
_fleet_primary_kill() {
  local dir=$1 log=$1/fault.log deadline primary half
  : >"$log"
  deadline=$((SECONDS + 600))
  until curl -sf "http://127.0.0.1:$K6_API_PORT/v1/metrics/iterations" 2>/dev/null | grep -q '"count":[1-9]'; do
    if ! kill -0 "$K6_PID" 2>/dev/null || ((SECONDS > deadline)); then
      echo "$(date +%s.%N) load-not-started" >>"$log"
      return 0
    fi
    sleep 0.2
  done
  echo "$(date +%s.%N) load-started" >>"$log"
  half=$(($(_fleet_load_seconds) / 2))
  sleep "$half"
  primary=$(redis_cluster_fault_primary "$FAULT_PRIMARY")
  # Which node does what: commands per node so far, for the report.
  for port in $REDIS_CLUSTER_PORTS; do
    echo "$(date +%s.%N) node $port $(redis-cli -p "$port" INFO 2>/dev/null | tr -d '\r' |
      awk -F: '/^role:/ { r = $2 } /^total_commands_processed:/ { c = $2 } END { print r, c }')" >>"$log"
  done
  redis_cluster_kill "$primary"
  echo "$(date +%s.%N) killed 127.0.0.1:$primary" >>"$log"
  if redis_cluster_await_ok 60; then
    echo "$(date +%s.%N) promoted" >>"$log"
  else
    echo "$(date +%s.%N) not-promoted" >>"$log"
  fi
  sleep "$FLEET_FAULT_RESTART_SECONDS"
  if redis_cluster_restart "$primary"; then
    echo "$(date +%s.%N) restarted 127.0.0.1:$primary" >>"$log"
  else
    echo "$(date +%s.%N) not-restarted 127.0.0.1:$primary" >>"$log"
  fi
}

# fleet_main RUN_DIR: --topology-compare, or one fleet run.
fleet_main() {
  if ${TOPOLOGY_COMPARE:-false}; then
    _fleet_topology_compare "$1"
  else
    fleet_run "$1"
  fi
}

# The same fleet on the standalone server and on the cluster in turn, fresh instances and nginx each round.
_fleet_topology_compare() {
  local dir=$1 label status=0 runs=() rounds=("${FLEET_TOPOLOGY_ROUNDS[@]}")
  ! $SMOKE || rounds=("${FLEET_TOPOLOGY_ROUNDS_SMOKE[@]}")
  for label in "${rounds[@]}"; do
    _fleet_use_topology "${label%-*}"
    FLEET_LABEL=$label fleet_run "$dir/$label"
    [[ $FLEET_STATUS == 0 ]] || status=$FLEET_STATUS
    runs+=("$dir/$label")
    service_stop nginx
    service_stop api
  done
  step "standalone against cluster"
  python3 "$ROOT/loadtests/lib/fleet.py" topology "${runs[@]}" | tee "$dir/compare.txt"
  python3 "$ROOT/loadtests/lib/fleet.py" topology "${runs[@]}" >/dev/null || status=${status/#0/99}
  FLEET_STATUS=$status
}
