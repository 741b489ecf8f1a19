#!/usr/bin/env bash
# The test command: installs what the tests need when it is missing, then runs every test. The tests
# start their own redis-server and mariadbd on free loopback ports and remove them afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh redis-server mariadb-server
./mvnw -B -ntp verify
