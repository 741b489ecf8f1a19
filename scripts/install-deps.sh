#!/usr/bin/env bash
# Installs, from Debian's packages, the servers and tools the tests and the runner start for themselves.
# Usage: scripts/install-deps.sh [package...]   (default: what the test suite needs)
set -euo pipefail

packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=(redis-server mariadb-server)

# A package counts as present when its main binary is on this machine.
binary_of() {
  case "$1" in
    redis-server) echo /usr/bin/redis-server ;;
    mariadb-server) echo /usr/sbin/mariadbd ;;
    prometheus) echo /usr/bin/prometheus ;;
    nginx) echo /usr/sbin/nginx ;;
    chromium) echo /usr/bin/chromium ;;
    debootstrap) echo /usr/sbin/debootstrap ;;
    # No binary of its own: callers ask for it only once `python3 -m venv` failed.
    python3-venv) echo /nonexistent/python3-venv ;;
    *) echo "/usr/bin/$1" ;;
  esac
}

missing=()
for package in "${packages[@]}"; do
  [ -x "$(binary_of "$package")" ] || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "Missing: ${missing[*]}. Install them as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "Installing ${missing[*]} from Debian's packages..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The packages' own services are not wanted: tests and scripts start private instances.
apt-get install -y -qq --no-install-recommends "${missing[@]}" > /tmp/concert-cache-apt.log 2>&1 \
  || { tail -20 /tmp/concert-cache-apt.log >&2; exit 1; }
