#!/usr/bin/env bash
# ensure_python_env: a virtual environment in loadtests/.venv (git-ignored) with loadtests/requirements.txt,
# created on first use and again when the requirements change, put first on PATH: python3 is then the venv's
# for this shell and every script it starts. Needs python3's venv module (Debian: python3-venv, installed
# through scripts/install-deps.sh when missing) and PyPI.
#
#   source loadtests/lib/python-env.sh && ensure_python_env
PYTHON_ENV_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

ensure_python_env() {
  local venv=$PYTHON_ENV_ROOT/loadtests/.venv requirements=$PYTHON_ENV_ROOT/loadtests/requirements.txt
  if [[ ! -x $venv/bin/python3 ]] || ! cmp -s "$requirements" "$venv/requirements.txt"; then
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
      rm -rf "$venv"
      "$PYTHON_ENV_ROOT/scripts/install-deps.sh" python3-venv || return 1
      python3 -m venv "$venv" || return 1
    fi
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements" || {
      rm -rf "$venv"
      echo "python-env: could not install loadtests/requirements.txt from PyPI" >&2
      return 1
    }
    cp "$requirements" "$venv/requirements.txt"
  fi
  export PATH="$venv/bin:$PATH"
}
