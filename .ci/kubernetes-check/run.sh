#!/usr/bin/env bash
# Validate deploy/kubernetes/ offline: every manifest against the Kubernetes OpenAPI schemas bundled in
# kubernetes-validate (strict: unknown fields fail), then the project's own rules (rules.py).
# Usage: .ci/kubernetes-check/run.sh [manifest...]      (exit status non-zero on any problem)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

# Pinned: the tool and the schemas it bundles. The cluster version the manifests must load on.
tool_version=1.37.0
kubernetes_version=1.34.0

venv="${XDG_CACHE_HOME:-$HOME/.cache}/concert-cache/kubernetes-validate-$tool_version"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv" || { echo "python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$tool_version"
fi

cd "$root"
if [ $# -gt 0 ]; then manifests=("$@"); else manifests=(deploy/kubernetes/*.yaml); fi
"$venv/bin/kubernetes-validate" --strict --quiet -k "$kubernetes_version" "${manifests[@]}"
"$venv/bin/python" "$here/rules.py" "${manifests[@]}"
echo "kubernetes-check: OK (${#manifests[@]} files, Kubernetes $kubernetes_version)"
