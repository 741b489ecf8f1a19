#!/usr/bin/env bash
# Makes, once per machine, a Debian sid root file system holding Oracle's MySQL server (source package
# mysql-9.7). Debian 12 ships only MariaDB, and sid's mysqld needs a newer C library than the host's, so
# the server runs chrooted into this tree; the chroot shares the host's loopback, so clients reach it on
# 127.0.0.1 like the private MariaDB. test-support's MySqlServer starts it (scripts/services.sh through its Launcher).
#
# Usage: scripts/mysql-rootfs.sh [DIR]
#   DIR defaults to $CONCERT_CACHE_MYSQL_ROOTFS, else ~/.cache/concert-cache/mysql-rootfs.
# A finished tree (DIR/.concert-cache-ready) is reused as is; prints the time it took to make one.
set -euo pipefail

dir=${1:-${CONCERT_CACHE_MYSQL_ROOTFS:-${XDG_CACHE_HOME:-$HOME/.cache}/concert-cache/mysql-rootfs}}
ready="$dir/.concert-cache-ready"
if [[ -f $ready ]]; then
  echo "MySQL root file system: reusing $dir ($(cat "$ready"))"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "No MySQL root file system at $dir. Making one needs root (debootstrap, chroot): sudo $0 $dir" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null; then
  echo "Installing debootstrap from Debian's packages..."
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
started=$SECONDS
# Built beside the final place and moved there when complete, so an interrupted run leaves no half tree
# that a later run would take for a finished one.
partial="$dir.partial"
rm -rf "$partial"
mkdir -p "$(dirname "$dir")"
log="$(dirname "$dir")/mysql-rootfs.log"
echo "Making the MySQL root file system in $dir (debootstrap sid from $mirror; log: $log)..."
debootstrap --variant=minbase sid "$partial" "$mirror" >"$log" 2>&1 \
  || { tail -20 "$log" >&2; echo "debootstrap sid failed (log: $log)" >&2; exit 1; }
# sid's Release file can be past its Valid-Until date on a mirror that lags; the packages are still signed.
chroot "$partial" env DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Check-Valid-Until=false update >>"$log" 2>&1
chroot "$partial" env DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Check-Valid-Until=false \
  install -y --no-install-recommends mysql-server-core mysql-client-core >>"$log" 2>&1 \
  || { tail -20 "$log" >&2; echo "installing mysql-server-core in the sid tree failed (log: $log)" >&2; exit 1; }
chroot "$partial" apt-get clean
version=$(chroot "$partial" mysqld --version)
rm -rf "$dir"
mv "$partial" "$dir"
echo "$version; made in $((SECONDS - started)) s" >"$ready"
echo "MySQL root file system made in $((SECONDS - started)) s: $version"
