# shellcheck shell=bash
# The runner's two nginx servers (lib/fleet.sh's proxy in front of the instances, lib/http-limit.sh's file server)
# run the same way: a configuration generated into a directory of their own that also holds their pid file, error
# log and temp files, nginx in the foreground, tracked by scripts/services.sh. Sourced by run.sh.
#
#   nginx_bin                    the nginx binary
#   nginx_conf_head DIR WORKERS  prints the configuration up to inside its http block
#   nginx_start NAME DIR TRACKED_DIR CHECK...   starts nginx on DIR/nginx.conf and waits until it serves

nginx_bin() {
  command -v nginx || echo /usr/sbin/nginx
}

# nginx_conf_head DIR WORKERS: WORKERS worker processes, their pid file, error log and temp files in DIR, and the
# http block opened; the caller writes the rest of it and closes it.
nginx_conf_head() {
  local dir=$1 workers=$2
  cat <<NGINX
worker_processes $workers;
worker_rlimit_nofile 16384;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events {
  worker_connections 8192;
}
http {
  client_body_temp_path $dir/client_body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
NGINX
}

# nginx_start NAME DIR TRACKED_DIR CHECK...: nginx on DIR/nginx.conf, tracked as NAME (stopping it deletes
# TRACKED_DIR; "" for none), until its pid file names it and the command CHECK succeeds; fails with the end of its
# error log on stderr if it exits or does not within 15 s. The pid file comes once its sockets are bound: a port that
# answers before that could be another run's server (seen: a --join run's 8080 taken during its floor round, k6 then
# replaying against someone else's API).
nginx_start() {
  local name=$1 dir=$2 tracked_dir=$3 pid
  shift 3
  "$(nginx_bin)" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" -g 'daemon off;' >>"$dir/error.log" 2>&1 &
  pid=$!
  service_track "$name" "$pid" "$tracked_dir"
  service_await_ready "$pid" 15 "$dir/error.log" _nginx_serves "$dir" "$pid" "$@"
}

# _nginx_serves DIR PID CHECK...: DIR's pid file names PID and CHECK succeeds.
_nginx_serves() {
  [[ $(cat "$1/nginx.pid" 2>/dev/null) == "$2" ]] && "${@:3}"
}
