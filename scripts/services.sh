#!/usr/bin/env bash
# shellcheck disable=SC2119,SC2120 # free_port's argument is optional
# Private redis-server and mariadbd for load tests and manual runs: free loopback ports, throwaway
# directories, nothing shared with a system instance (no /etc/mysql, no /var/lib/redis).
#
# As a library:
#   source scripts/services.sh
#   trap stop_services EXIT INT TERM
#   start_redis && start_mariadb          # exports REDIS_PORT, DB_PORT, DB_SOCKET, DB_JDBC_URL
#   start_redis_cluster                   # instead of start_redis: 3 primaries + 3 replicas, exports
#                                         # REDIS_CLUSTER_PORTS, REDIS_CLUSTER_NODES (host:port,...), REDIS_PORT
#   some_server & service_track api $!    # stop_services stops it too, before the servers it needs
#   service_stop api                      # stops just that one
#   load_data_set JAVA JAR N LOG ARGS...  # N concerts into the MariaDB: generated, or restored from a dump
#
# RUNNER_DATA_CACHE (a directory, scripts/test.sh makes one for its stack runs): load_data_set dumps what it
# generated there, and later calls of the same size with the same jar restore that dump (seconds) instead of
# starting a JVM to generate it again.
#
# Written to work under `set -euo pipefail` as well as without it.
#
# As a command: scripts/services.sh [--redis-cluster]   (starts them, prints the settings, stops them on Ctrl-C)

SERVICES_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Parallel arrays, in start order; stop_services walks them backwards so dependants stop first.
_SERVICE_NAMES=()
_SERVICE_PIDS=()
_SERVICE_DIRS=()

# free_port [PREFERRED]: prints PREFERRED if it can be bound on 127.0.0.1, else a port the kernel
# picks. Another process could take it before the caller binds, which start_* turn into a clear
# start-up failure rather than a hang.
free_port() {
  python3 - "${1:-0}" <<'PY'
import socket, sys
for port in (int(sys.argv[1]), 0):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        print(s.getsockname()[1])
        break
    except OSError:
        continue
    finally:
        s.close()
PY
}

# wait_for_port PORT [TIMEOUT_SECONDS [PID]]: succeeds once 127.0.0.1:PORT accepts connections;
# fails at the timeout, or at once if PID (the server being waited for) has exited.
wait_for_port() {
  local port=$1 timeout=${2:-30} pid=${3:-}
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      return 0
    fi
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
      return 1
    fi
    sleep 0.2
  done
  return 1
}

# service_track NAME PID [DIR]: stop_services will stop PID and delete DIR.
service_track() {
  _SERVICE_NAMES+=("$1")
  _SERVICE_PIDS+=("$2")
  _SERVICE_DIRS+=("${3:-}")
}

# Starts redis-server with the repo's redis/redis.conf; exports REDIS_PORT and REDIS_DIR.
_REDIS_COMMAND=()
start_redis() {
  local dir port pid conf="$SERVICES_ROOT/redis/redis.conf"
  dir=$(mktemp -d "${TMPDIR:-/tmp}/concert-cache-redis.XXXXXX") || return 1
  port=$(free_port) || return 1
  # The command line wins over the file: port, dir and loopback-only binding are ours to choose.
  local args=(--port "$port" --dir "$dir" --daemonize no --bind 127.0.0.1 --logfile "$dir/redis.log")
  if [[ -f $conf ]]; then
    _REDIS_COMMAND=(redis-server "$conf" "${args[@]}")
  else
    # No repo config (yet): a cache needs no persistence either way.
    _REDIS_COMMAND=(redis-server "${args[@]}" --save '' --appendonly no)
  fi
  "${_REDIS_COMMAND[@]}" >>"$dir/redis.log" 2>&1 &
  pid=$!
  service_track redis "$pid" "$dir"
  if ! wait_for_port "$port" 15 "$pid"; then
    _service_failed redis "$dir/redis.log"
    return 1
  fi
  export REDIS_PORT=$port REDIS_DIR=$dir
}

# restart_redis [DOWN_SECONDS]: stops the redis-server start_redis started (SIGTERM: clients see their
# connections close) and starts it again DOWN_SECONDS later (default 0) with the same command line, port
# and directory. Without persistence it comes back empty, as a restarted cache does. Call it from the
# shell that started Redis.
restart_redis() {
  local i pid
  for i in "${!_SERVICE_NAMES[@]}"; do
    [[ ${_SERVICE_NAMES[i]} != redis ]] || break
  done
  [[ ${_SERVICE_NAMES[i]:-} == redis ]] || return 1
  pid=${_SERVICE_PIDS[i]}
  kill -TERM "$pid" 2>/dev/null || true
  _service_await_exit "$pid" 30 || kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  sleep "${1:-0}"
  "${_REDIS_COMMAND[@]}" >>"$REDIS_DIR/redis.log" 2>&1 &
  _SERVICE_PIDS[i]=$!
  wait_for_port "$REDIS_PORT" 15 "$!"
}

# start_redis_cluster [PRIMARIES [REPLICAS_EACH]]: a Redis Cluster of redis-server processes (default 3
# primaries with 1 replica each) with the repo's redis/redis.conf plus cluster mode, on free loopback ports
# (client and bus port each: port + 10000 may not be free, or not exist), created with
# `redis-cli --cluster create`, ready when every node reports cluster_state:ok and every replica is in sync.
# Exports REDIS_CLUSTER_PORTS (space-separated, primaries first as created), REDIS_CLUSTER_NODES
# (127.0.0.1:port,... for spring.data.redis.cluster.nodes) and REDIS_PORT (the first node, for redis-cli).
# Each node is tracked as service redis-cluster; service_stop redis-cluster stops them all.
REDIS_CLUSTER_NODE_TIMEOUT_MS=${REDIS_CLUSTER_NODE_TIMEOUT_MS:-2000}
start_redis_cluster() {
  local primaries=${1:-3} replicas=${2:-1} count i dir port bus pid
  local ports=() taken=() addresses=()
  count=$((primaries * (1 + replicas)))
  for ((i = 0; i < count; i++)); do
    dir=$(mktemp -d "${TMPDIR:-/tmp}/concert-cache-redis-cluster.XXXXXX") || return 1
    port=$(_free_port_except "${taken[@]}") && taken+=("$port") || return 1
    bus=$(_free_port_except "${taken[@]}") && taken+=("$bus") || return 1
    printf -v "_REDIS_CLUSTER_NODE_$port" '%s' "$bus $dir"
    _redis_cluster_node "$port"
    pid=$!
    if ! wait_for_port "$port" 15 "$pid"; then
      _service_failed "redis-server (cluster node $port)" "$dir/redis.log"
      return 1
    fi
    ports+=("$port")
    addresses+=("127.0.0.1:$port")
  done
  if ! redis-cli --cluster create "${addresses[@]}" --cluster-replicas "$replicas" --cluster-yes \
    >"$dir/create.log" 2>&1; then
    _service_failed "redis-cli --cluster create" "$dir/create.log"
    return 1
  fi
  export REDIS_CLUSTER_PORTS="${ports[*]}" REDIS_PORT=${ports[0]}
  REDIS_CLUSTER_NODES=$(IFS=,; echo "${addresses[*]}")
  export REDIS_CLUSTER_NODES
  redis_cluster_await_ok 60 || {
    _service_failed "the Redis Cluster (not ok within 60 s)" "$dir/create.log"
    return 1
  }
}

# redis_cluster_fault_primary stream|other|capture: the port of the primary that holds the invalidation stream,
# of another primary, or of the primary that holds the change capture's lease (another if none holds it yet).
redis_cluster_fault_primary() {
  local stream port
  stream=$(redis_cluster_stream_primary)
  if [[ $1 == stream ]]; then
    echo "$stream"
    return
  fi
  if [[ $1 == capture ]]; then
    for port in $REDIS_CLUSTER_PORTS; do
      redis-cli -p "$port" INFO replication 2>/dev/null | grep -q '^role:master' || continue
      if [[ -n $(redis-cli -p "$port" --scan --pattern '{*:capture}:leader' 2>/dev/null) ]]; then
        echo "$port"
        return
      fi
    done
  fi
  for port in $REDIS_CLUSTER_PORTS; do
    if [[ $port != "$stream" ]] && redis-cli -p "$port" INFO replication 2>/dev/null | grep -q '^role:master'; then
      echo "$port"
      return
    fi
  done
  echo "$stream"
}

# redis_cluster_stream_primary: the port of the primary that holds the invalidation stream (the node whose loss
# tests a failover of the cache's invalidations), or of the first primary if no node holds a stream yet.
redis_cluster_stream_primary() {
  local port first=""
  for port in $REDIS_CLUSTER_PORTS; do
    redis-cli -p "$port" INFO replication 2>/dev/null | grep -q '^role:master' || continue
    first=${first:-$port}
    # By name and TYPE: redis-cli 7.0 has no --scan --type (it refuses the option and lists nothing).
    local key
    for key in $(redis-cli -p "$port" --scan --pattern '*:invalidations' 2>/dev/null); do
      if [[ $(redis-cli -p "$port" TYPE "$key" 2>/dev/null) == stream ]]; then
        echo "$port"
        return
      fi
    done
  done
  echo "$first"
}

# redis_cluster_kill PORT: kills that node as a crash would (SIGKILL): no shutdown, no last save.
redis_cluster_kill() {
  local pid
  pid=$(redis-cli -p "$1" INFO server 2>/dev/null | tr -d '\r' | awk -F: '/^process_id:/ { print $2 }')
  [[ -n $pid ]] && kill -9 "$pid"
}

# redis_cluster_restart PORT: starts a killed node again with its data dir (and nodes.conf): it rejoins the
# cluster, as a replica of the node promoted in its place.
redis_cluster_restart() {
  _redis_cluster_node "$1"
  wait_for_port "$1" 15 "$!"
}

# _redis_cluster_node PORT: one cluster node in the background, tracked. Cluster mode, a node timeout short
# enough for a failover within seconds in tests and load runs, and replicas that answer nothing while their link
# is down (a cache must not serve what it cannot vouch for).
_redis_cluster_node() {
  local node_var=_REDIS_CLUSTER_NODE_$1 bus dir
  read -r bus dir <<<"${!node_var}"
  redis-server "$SERVICES_ROOT/redis/redis.conf" --port "$1" --cluster-port "$bus" --dir "$dir" --daemonize no \
    --bind 127.0.0.1 --logfile "$dir/redis.log" --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" \
    --cluster-node-timeout "$REDIS_CLUSTER_NODE_TIMEOUT_MS" --replica-serve-stale-data no >>"$dir/redis.log" 2>&1 &
  service_track redis-cluster "$!" "$dir"
}

# redis_cluster_await_ok [TIMEOUT_SECONDS]: every running node of the cluster says cluster_state:ok, and every
# replica's link to its primary is up.
redis_cluster_await_ok() {
  local deadline=$((SECONDS + ${1:-30})) port ok
  while ((SECONDS < deadline)); do
    ok=true
    for port in $REDIS_CLUSTER_PORTS; do
      if ! redis-cli -p "$port" PING >/dev/null 2>&1; then
        continue # a node that was stopped on purpose
      fi
      redis-cli -p "$port" CLUSTER INFO 2>/dev/null | grep -q '^cluster_state:ok' || ok=false
      if redis-cli -p "$port" INFO replication 2>/dev/null | grep -q '^role:slave'; then
        redis-cli -p "$port" INFO replication | grep -q '^master_link_status:up' || ok=false
      fi
    done
    if $ok; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# redis_cluster_call COMMAND...: runs COMMAND on every primary (FLUSHALL, INFO, ...).
redis_cluster_call() {
  redis-cli --cluster call "127.0.0.1:$REDIS_PORT" "$@" --cluster-only-masters
}

# redis_cluster_info FILE: INFO of every node, one file each (FILE.<port>), and in FILE the sums of the
# counters report.py reads (rejected_connections, total_commands_processed, ...). Its connected_clients
# counts the application's connections only (not each node's redis-cli nor replication links) plus one, as
# a single redis-cli asking one standalone server would see it.
redis_cluster_info() {
  local port
  for port in $REDIS_CLUSTER_PORTS; do
    redis-cli -p "$port" INFO 2>/dev/null | tr -d '\r' >"$1.$port" || true
  done
  for port in $REDIS_CLUSTER_PORTS; do
    echo "node:$port"
    cat "$1.$port"
  done | awk -F: '
    /^node:/ { nodes++ }
    /^connected_slaves:/ { sum["connected_clients"] -= $2 }
    /^(connected_clients|rejected_connections|total_commands_processed|total_connections_received|keyspace_hits|keyspace_misses|evicted_keys):/ {
      sum[$1] += $2 }
    END {
      sum["connected_clients"] -= nodes - 1
      print "# Sums over the " nodes " cluster nodes"
      for (k in sum) print k ":" sum[k] }' >"$1"
}

# A free port that is none of the arguments (ports handed out but not yet bound).
_free_port_except() {
  local port tries=0
  while ((tries++ < 50)); do
    port=$(free_port) || return 1
    [[ " $* " == *" $port "* ]] || { echo "$port"; return 0; }
  done
  return 1
}

# Starts mariadbd on a fresh data directory with database concert_cache and user concert/concert;
# exports DB_PORT, DB_SOCKET (root, no password, for status queries), DB_DIR and DB_JDBC_URL.
start_mariadb() {
  local dir port pid mariadbd
  mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd) # /usr/sbin is not on every PATH
  if [[ ! -x $mariadbd ]]; then
    echo "services: mariadbd not found (apt-get install mariadb-server)" >&2
    return 1
  fi
  dir=$(mktemp -d "${TMPDIR:-/tmp}/concert-cache-mariadb.XXXXXX") || return 1
  port=$(free_port) || return 1
  # mariadbd refuses to run as root unless told to.
  local user=()
  if ((EUID == 0)); then
    user=(--user=root)
  fi
  # --no-defaults everywhere: the system's /etc/mysql files would point at its socket and datadir.
  if ! mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal \
    --skip-test-db "${user[@]}" >"$dir/install.log" 2>&1; then
    service_track mariadb "" "$dir"
    _service_failed mariadb-install-db "$dir/install.log"
    return 1
  fi
  # The repository's settings, as test-support's MariaDbServer reads them: ops/mariadb/binlog.cnf (the row-based
  # binary log change data capture needs, ADR 0033) then ops/mariadb/test.cnf (a throwaway server's); a file of
  # includes because !include takes absolute paths only. The command line wins over both: what is per instance,
  # and what a benchmark needs beyond a test: a 1 GiB buffer pool holds the whole data set, so reads measure the
  # query path and not the disk, and a larger redo log keeps the loader's inserts from waiting on checkpoints.
  printf '!include %s\n!include %s\n' "$SERVICES_ROOT/ops/mariadb/binlog.cnf" "$SERVICES_ROOT/ops/mariadb/test.cnf" \
    >"$dir/my.cnf"
  "$mariadbd" --defaults-file="$dir/my.cnf" "${user[@]}" \
    --datadir="$dir/data" --socket="$dir/mariadbd.sock" --pid-file="$dir/mariadbd.pid" --port="$port" \
    --log-error="$dir/mariadbd.err" --innodb-buffer-pool-size=1G --innodb-log-file-size=256M \
    >>"$dir/mariadbd.err" 2>&1 &
  pid=$!
  service_track mariadb "$pid" "$dir"
  if ! wait_for_port "$port" 60 "$pid"; then
    _service_failed mariadbd "$dir/mariadbd.err"
    return 1
  fi
  if ! mariadb --no-defaults --socket="$dir/mariadbd.sock" -uroot -e "
      CREATE DATABASE concert_cache;
      CREATE USER 'concert'@'%' IDENTIFIED BY 'concert';
      GRANT ALL PRIVILEGES ON concert_cache.* TO 'concert'@'%';
      GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'concert'@'%';"; then
    _service_failed mariadbd "$dir/mariadbd.err"
    return 1
  fi
  export DB_PORT=$port DB_SOCKET=$dir/mariadbd.sock DB_DIR=$dir
  export DB_JDBC_URL="jdbc:mariadb://127.0.0.1:$port/concert_cache"
}

# Starts MySQL 9.7 (Debian sid's mysqld, chrooted into the root file system scripts/mysql-rootfs.sh makes once
# per machine; needs root) on a fresh data directory inside that tree, with the README's [mysqld] settings,
# database concert_cache and user concert/concert; exports what start_mariadb exports. The chroot shares the
# host's loopback, and DB_SOCKET is the socket's path on the host, so the host's mariadb client reaches it both ways.
start_mysql() {
  local rootfs dir inside port pid
  rootfs=${CONCERT_CACHE_MYSQL_ROOTFS:-${XDG_CACHE_HOME:-$HOME/.cache}/concert-cache/mysql-rootfs}
  "$SERVICES_ROOT/scripts/mysql-rootfs.sh" "$rootfs" || return 1
  dir=$(mktemp -d "$rootfs/tmp/concert-cache-mysql.XXXXXX") || return 1
  inside=${dir#"$rootfs"}
  port=$(free_port) || return 1
  if ! chroot "$rootfs" /usr/sbin/mysqld --no-defaults --initialize-insecure --user=root --datadir="$inside/data" \
    >"$dir/install.log" 2>&1; then
    service_track mysql "" "$dir"
    _service_failed "mysqld --initialize-insecure" "$dir/install.log"
    return 1
  fi
  # As start_mariadb's: loopback only, no X protocol port (33060 for every instance), throwaway durability, a
  # buffer pool that holds the data set and a redo log that keeps the loader's inserts from waiting.
  chroot "$rootfs" /usr/sbin/mysqld --no-defaults --user=root --datadir="$inside/data" \
    --socket="$inside/mysqld.sock" --pid-file="$inside/mysqld.pid" --port="$port" --bind-address=127.0.0.1 \
    --skip-name-resolve --mysqlx=OFF --secure-file-priv= --character-set-server=utf8mb4 \
    --collation-server=utf8mb4_unicode_ci --innodb-flush-log-at-trx-commit=2 --innodb-buffer-pool-size=1G \
    --innodb-redo-log-capacity=512M --log-bin=mysql-bin --binlog-format=ROW --binlog-row-image=FULL \
    --gtid-mode=ON --enforce-gtid-consistency=ON --server-id=1 --binlog-expire-logs-seconds=604800 \
    >>"$dir/mysqld.err" 2>&1 &
  pid=$!
  service_track mysql "$pid" "$dir"
  if ! wait_for_port "$port" 60 "$pid"; then
    _service_failed mysqld "$dir/mysqld.err"
    return 1
  fi
  # The last statement logs concert in over the socket, where caching_sha2_password takes the password in
  # clear: from then on its logins over TCP need neither TLS nor the server's RSA key (the mariadb client
  # of --sql-writer has neither), until the server restarts.
  if ! mariadb --no-defaults --socket="$dir/mysqld.sock" -uroot -e "
      CREATE DATABASE concert_cache CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
      CREATE USER 'concert'@'%' IDENTIFIED BY 'concert';
      GRANT ALL PRIVILEGES ON concert_cache.* TO 'concert'@'%';
      GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'concert'@'%';" ||
    ! mariadb --no-defaults --socket="$dir/mysqld.sock" -uconcert -pconcert -e "SELECT 1" >/dev/null; then
    _service_failed mysqld "$dir/mysqld.err"
    return 1
  fi
  export DB_PORT=$port DB_SOCKET=$dir/mysqld.sock DB_DIR=$dir
  export DB_JDBC_URL="jdbc:mariadb://127.0.0.1:$port/concert_cache?allowPublicKeyRetrieval=true"
}

# load_data_set JAVA JAR CONCERTS LOG [ARGS...]: CONCERTS concerts (generate profile, seed 42) into database
# concert_cache of the MariaDB start_mariadb started; ARGS are the generator's datasource settings. With
# RUNNER_DATA_CACHE, restored from the dump of an earlier call of the same size and jar, or dumped there after.
load_data_set() {
  local java=$1 jar=$2 concerts=$3 log=$4 dump=""
  shift 4
  if [[ -n ${RUNNER_DATA_CACHE:-} ]]; then
    dump=$RUNNER_DATA_CACHE/mariadb-$concerts-$(stat -c %Y-%s "$jar").sql
  fi
  if [[ -n $dump && -s $dump ]]; then
    echo "restoring the data set an earlier run generated: $dump" >"$log"
    mariadb --no-defaults --socket="$DB_SOCKET" -uroot concert_cache <"$dump" >>"$log" 2>&1
    return
  fi
  "$java" -jar "$jar" --spring.profiles.active=generate "--concert-cache.generate.concerts=$concerts" \
    --concert-cache.generate.seed=42 "$@" >"$log" 2>&1 || return 1
  if [[ -n $dump ]]; then
    mariadb-dump --no-defaults --socket="$DB_SOCKET" -uroot --single-transaction --routines --triggers \
      concert_cache >"$dump.partial" && mv "$dump.partial" "$dump" ||
      echo "services: warning: could not dump the data set to $dump" >&2
  fi
}

# Stops everything tracked, newest first, and deletes the throwaway directories. Safe to call twice
# and from a trap.
stop_services() {
  local i
  for ((i = ${#_SERVICE_PIDS[@]} - 1; i >= 0; i--)); do
    _service_stop_at "$i"
  done
  _SERVICE_NAMES=()
  _SERVICE_PIDS=()
  _SERVICE_DIRS=()
}

# service_stop NAME: stops (and forgets) the tracked services called NAME.
service_stop() {
  local i names=() pids=() dirs=()
  for ((i = ${#_SERVICE_PIDS[@]} - 1; i >= 0; i--)); do
    if [[ ${_SERVICE_NAMES[i]} == "$1" ]]; then
      _service_stop_at "$i"
    fi
  done
  for i in "${!_SERVICE_PIDS[@]}"; do
    if [[ ${_SERVICE_NAMES[i]} != "$1" ]]; then
      names+=("${_SERVICE_NAMES[i]}")
      pids+=("${_SERVICE_PIDS[i]}")
      dirs+=("${_SERVICE_DIRS[i]}")
    fi
  done
  _SERVICE_NAMES=("${names[@]}")
  _SERVICE_PIDS=("${pids[@]}")
  _SERVICE_DIRS=("${dirs[@]}")
}

# SIGTERM (a clean shutdown for mariadbd, redis-server and Spring Boot), SIGKILL after 30 s.
_service_stop_at() {
  local pid=${_SERVICE_PIDS[$1]} dir=${_SERVICE_DIRS[$1]}
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    _service_await_exit "$pid" 30 || kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  if [[ -n $dir ]]; then
    rm -rf "$dir"
  fi
}

_service_await_exit() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

_service_failed() {
  echo "services: $1 did not start; last lines of $2:" >&2
  tail -n 20 "$2" >&2 2>/dev/null || true
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  trap stop_services EXIT
  trap 'exit 130' INT TERM
  if [[ ${1:-} == --redis-cluster ]]; then
    start_redis_cluster && start_mariadb || exit 1
    echo "REDIS_CLUSTER_NODES=$REDIS_CLUSTER_NODES DB_PORT=$DB_PORT DB_JDBC_URL=$DB_JDBC_URL"
  else
    start_redis && start_mariadb || exit 1
    echo "REDIS_PORT=$REDIS_PORT DB_PORT=$DB_PORT DB_JDBC_URL=$DB_JDBC_URL"
  fi
  echo "Ctrl-C stops them."
  wait -n "${_SERVICE_PIDS[@]}" # returns on Ctrl-C, or if either server dies

fi
