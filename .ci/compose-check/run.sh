#!/usr/bin/env bash
# Validate compose.yaml without a Docker engine: schema, interpolation, paths and the project's rules.
# Usage: .ci/compose-check/run.sh [-file compose.yaml]      (exit status non-zero on any problem)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
# go.sum is committed: -mod=mod only lets go fill the module cache, it does not change versions.
GOFLAGS="${GOFLAGS:-} -mod=mod" go run . -root "$root" "$@"
