#!/usr/bin/env bash
# Validate deploy/kubernetes/ offline, for each variant (base/ with sidecar/, base/ with cache-deployment/):
# every manifest against the Kubernetes OpenAPI schemas bundled in kubernetes-validate (strict: unknown fields
# fail), then the project's own rules (rules.py) over the variant and monitoring/; then the PrometheusRule's
# expressions with promtool: syntax (check rules) and behaviour on test series (test rules, alerts-test.yaml).
# Usage: .ci/kubernetes-check/run.sh      (exit status non-zero on any problem)
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
command -v promtool >/dev/null || { echo "promtool is missing (Debian: apt-get install prometheus)" >&2; exit 1; }

cd "$root/deploy/kubernetes"
files=0
for variant in sidecar cache-deployment; do
  manifests=(base/*.yaml "$variant"/*.yaml)
  # monitoring/ holds Prometheus Operator objects, which have no schema there: rules.py and promtool check them.
  "$venv/bin/kubernetes-validate" --strict --quiet -k "$kubernetes_version" "${manifests[@]}"
  "$venv/bin/python" "$here/rules.py" "${manifests[@]}" monitoring/*.yaml
  files=$((files + ${#manifests[@]}))
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" - monitoring/monitoring.yaml "$work/rules.yaml" <<'PY'
import sys, yaml
rules = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "PrometheusRule"]
yaml.safe_dump({"groups": [g for r in rules for g in r["spec"]["groups"]]}, open(sys.argv[2], "w"), sort_keys=False)
PY
cp "$here/alerts-test.yaml" "$work/"
promtool check rules "$work/rules.yaml" >/dev/null
promtool test rules "$work/alerts-test.yaml" >/dev/null || promtool test rules "$work/alerts-test.yaml"
echo "kubernetes-check: OK (2 variants, $files files, Kubernetes $kubernetes_version; alerts tested with promtool)"
