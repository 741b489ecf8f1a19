#!/usr/bin/env bash
# shellcheck disable=SC2119,SC2120 # free_port's argument is optional
# shellcheck disable=SC2153 # REDIS_PID, DB_PID, ...: _services_launch sets what the Launcher prints
# Private redis-server and mariadbd (or MySQL) for load tests and manual runs: free loopback ports, throwaway
# directories, nothing shared with a system instance (no /etc/mysql, no /var/lib/redis). The servers are the tests'
# own: test-support's Launcher (a main; its classes compiled here if missing) starts them with RedisServer,
# RedisCluster, RedisSentinel, MariaDbServer and MySqlServer, which own their command lines, settings, database and user, and
# readiness waits, and leaves them running; this script tracks, restarts and stops them, and loads the data.
#
# As a library:
#   source scripts/services.sh
#   trap stop_services EXIT INT TERM
#   start_redis && start_mariadb          # exports REDIS_PORT, REDIS_DIR, DB_PORT, DB_SOCKET, DB_DIR, DB_JDBC_URL
#   start_mysql                           # instead of start_mariadb: MySQL 9.7, chrooted (needs root)
#   start_redis_cluster                   # instead of start_redis: 3 primaries + 3 replicas, exports
#                                         # REDIS_CLUSTER_PORTS, REDIS_CLUSTER_NODES (host:port,...), REDIS_PORT
#   start_redis_sentinel                  # a primary, its replica and a Sentinel: REDIS_SENTINEL_PORT, ...
#   some_server & service_track api $!    # stop_services stops it too, before the servers it needs
#   service_await_ready $! 60 LOG curl -sf URL   # until it answers; LOG's tail and status 1 if it exits or times out
#   service_stop api                      # stops just that one
#   restart_redis, redis_cluster_kill PORT, redis_cluster_restart PORT   # faults: the same port and directory
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
# picks. Another process could take it before the caller binds, which wait_for_port with the caller's
# PID turns into a clear start-up failure rather than a hang.
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
    if [[ -n $pid ]] && ! _service_alive "$pid"; then
      return 1
    fi
    sleep 0.2
  done
  return 1
}

# service_await_ready PID SECONDS LOG CHECK...: runs the command CHECK (its output discarded) every 0.2 s until it
# succeeds, e.g. `curl -sf URL` for a server PID just started; fails with LOG's last 40 lines on stderr once PID has
# exited or SECONDS have passed.
service_await_ready() {
  local pid=$1 deadline=$((SECONDS + $2)) log=$3
  shift 3
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null || ((SECONDS > deadline)); then
      tail -n 40 "$log" >&2
      return 1
    fi
    sleep 0.2
  done
}

# service_track NAME PID [DIR]: stop_services will stop PID and delete DIR.
service_track() {
  _SERVICE_NAMES+=("$1")
  _SERVICE_PIDS+=("$2")
  _SERVICE_DIRS+=("${3:-}")
}

# start_redis: a redis-server with the repo's redis/redis.conf (test-support's RedisServer); exports REDIS_PORT and
# REDIS_DIR.
start_redis() {
  _services_launch redis || return 1
  service_track redis "$REDIS_PID" "$REDIS_DIR"
  export REDIS_PORT REDIS_DIR
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
  _services_rerun "$REDIS_COMMAND" "$REDIS_DIR"
  _SERVICE_PIDS[i]=$!
  wait_for_port "$REDIS_PORT" 15 "$!"
}

# start_redis_cluster [PRIMARIES [REPLICAS_EACH]]: a Redis Cluster (test-support's RedisCluster: default 3 primaries
# with 1 replica each, the repo's redis/redis.conf plus cluster mode, each node's client and bus port free, created
# with `redis-cli --cluster create`), ready when every node reports cluster_state:ok and every replica is in sync.
# Exports REDIS_CLUSTER_PORTS (space-separated, primaries first as created), REDIS_CLUSTER_NODES
# (127.0.0.1:port,... for spring.data.redis.cluster.nodes) and REDIS_PORT (the first node, for redis-cli).
# Each node is tracked as service redis-cluster; service_stop redis-cluster stops them all.
start_redis_cluster() {
  local port pid_var dir_var
  _services_launch redis-cluster ${1:+"$1" "${2:-1}"} || return 1
  for port in $REDIS_CLUSTER_PORTS; do
    pid_var=REDIS_CLUSTER_NODE_${port}_PID dir_var=REDIS_CLUSTER_NODE_${port}_DIR
    service_track redis-cluster "${!pid_var}" "${!dir_var}"
  done
  export REDIS_CLUSTER_PORTS REDIS_CLUSTER_NODES REDIS_PORT
}

# start_redis_sentinel: a Redis primary, its replica and a Sentinel watching them (test-support's RedisSentinel:
# quorum 1, a failover a second after the primary stops answering), ready once the replica is in sync and the
# Sentinel knows it. Exports REDIS_SENTINEL_MASTER (spring.data.redis.sentinel.master), REDIS_PRIMARY_PORT,
# REDIS_REPLICA_PORT and REDIS_SENTINEL_PORT; tracked as redis-primary, redis-replica and redis-sentinel.
start_redis_sentinel() {
  _services_launch redis-sentinel || return 1
  service_track redis-primary "$REDIS_PRIMARY_PID" "$REDIS_PRIMARY_DIR"
  service_track redis-replica "$REDIS_REPLICA_PID" "$REDIS_REPLICA_DIR"
  service_track redis-sentinel "$REDIS_SENTINEL_PID" "$REDIS_SENTINEL_DIR"
  export REDIS_SENTINEL_MASTER REDIS_PRIMARY_PORT REDIS_REPLICA_PORT REDIS_SENTINEL_PORT
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

# redis_cluster_restart PORT: starts a killed node again with its command line and data dir (and nodes.conf): it
# rejoins the cluster, as a replica of the node promoted in its place.
redis_cluster_restart() {
  local command_var=REDIS_CLUSTER_NODE_${1}_COMMAND dir_var=REDIS_CLUSTER_NODE_${1}_DIR i
  _services_rerun "${!command_var}" "${!dir_var}"
  for i in "${!_SERVICE_DIRS[@]}"; do
    [[ ${_SERVICE_DIRS[i]} != "${!dir_var}" ]] || _SERVICE_PIDS[i]=$!
  done
  wait_for_port "$1" 15 "$!"
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

# start_mariadb: a mariadbd (test-support's MariaDbServer, with a benchmark's buffer pool and redo log: the
# Launcher's) on a fresh data directory with database concert_cache and user concert/concert; exports DB_PORT,
# DB_SOCKET (root, no password, for status queries), DB_DIR and DB_JDBC_URL, and sets DB_PID and DB_COMMAND (its
# command line, shell-quoted, for a restart on the same port and data: loadtests/lib/db-outage.sh).
start_mariadb() {
  _services_launch mariadb || return 1
  service_track mariadb "$DB_PID" "$DB_DIR"
  export DB_PORT DB_SOCKET DB_DIR DB_JDBC_URL
}

# start_mysql: MySQL 9.7 (test-support's MySqlServer: Debian sid's mysqld, chrooted into the root file system
# scripts/mysql-rootfs.sh makes once per machine; needs root) on a fresh data directory inside that tree, with the
# README's [mysqld] settings, database concert_cache and user concert/concert; sets what start_mariadb sets. The
# chroot shares the host's loopback, and DB_SOCKET is the socket's path on the host, so the host's mariadb client
# reaches it both ways.
start_mysql() {
  _services_launch mysql || return 1
  service_track mysql "$DB_PID" "$DB_DIR"
  export DB_PORT DB_SOCKET DB_DIR DB_JDBC_URL
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
  if [[ -n $pid ]] && _service_alive "$pid"; then
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
  while _service_alive "$pid"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# _service_alive PID: the process runs. A zombie does not: the servers Launcher started are not this shell's
# children, and init reaps them when it gets to it.
_service_alive() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  [[ ${stat##*) } != Z* ]]
}

# service_await_any_exit: returns once any tracked service has exited (`wait -n` would see this shell's children
# only, and the servers Launcher started are not).
service_await_any_exit() {
  local pid
  while sleep 1; do
    for pid in "${_SERVICE_PIDS[@]}"; do
      [[ -z $pid ]] || _service_alive "$pid" || return 0
    done
  done
}

# The classes of test-support, whose Launcher starts the servers: compiled first when missing or older than their
# sources (loadtests/run.sh's build of the API compiles them too).
_services_launcher_classes() {
  local classes=$SERVICES_ROOT/test-support/target/classes
  local launcher=$classes/dev/concertcache/testsupport/Launcher.class
  if [[ ! -f $launcher || -n $(find "$SERVICES_ROOT/test-support/pom.xml" "$SERVICES_ROOT/test-support/src/main" \
    -newer "$launcher" -print -quit 2>/dev/null) ]]; then
    echo "services: compiling test-support, whose Launcher starts the servers" >&2
    (cd "$SERVICES_ROOT" && ./mvnw -q -B -ntp -pl test-support compile) >&2 || return 1
    touch "$launcher" # up to date even when the compiler found nothing to do
  fi
  echo "$classes"
}

# _services_launch SERVER...: starts them with test-support's Launcher, one JVM for all, in the repository (it reads
# redis/redis.conf and ops/mariadb/ there), and sets the shell variables it prints (NAME=value lines). The servers
# keep running after it exits; if one fails, it says why on stderr and leaves nothing behind.
_services_launch() {
  local classes output line
  classes=$(_services_launcher_classes) || return 1
  # A JVM that starts fast: it spawns processes and waits on ports, with nothing to optimize or collect.
  output=$(cd "$SERVICES_ROOT" && java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData \
    -Djava.io.tmpdir="${TMPDIR:-/tmp}" -cp "$classes" dev.concertcache.testsupport.Launcher "$@") || {
    echo "services: could not start $*" >&2
    return 1
  }
  while IFS= read -r line; do
    if [[ $line =~ ^([A-Z][A-Z0-9_]*)=(.*)$ ]]; then
      printf -v "${BASH_REMATCH[1]}" '%s' "${BASH_REMATCH[2]}"
    fi
  done <<<"$output"
}

# _services_rerun COMMAND DIR: a server's command line as Launcher printed it (shell-quoted) run again, in the
# background, its output appended to DIR/server.log as Launcher's was; $! is its pid.
_services_rerun() {
  local command=()
  eval "command=($1)"
  "${command[@]}" >>"$2/server.log" 2>&1 &
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
  service_await_any_exit # returns on Ctrl-C, or if either server dies

fi
