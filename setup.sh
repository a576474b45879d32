#!/usr/bin/env bash
# One set-up command for a fresh machine: creates .venv at the repository root and
# installs the core, every environment package under agentgym/, openmanus_rl (verl)
# and the test tools, all pinned. Re-running it is fast (skips when nothing changed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root="$PWD"

[ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
py="$root/.venv/bin/python"
pins="$root/requirements/constraints.txt"
stamp=.venv/.setup-stamp
want="$(cat setup.sh setup.py requirements/*.txt agentgym/*/setup.py agentgym/*/setup.sh | sha256sum | cut -c1-16)"
if [ "${1:-}" != "--force" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "setup.sh: .venv is up to date (bash setup.sh --force reinstalls)"
    exit 0
fi

pip() { "$py" -m pip install --quiet --disable-pip-version-check -c "$pins" "$@"; }
pip "pip==26.3"
pip "torch==2.13.0"          # first, so nothing pulls another torch build
pip -r requirements/dev.txt
# the project's own packages build with the pinned setuptools just installed (no isolated build env per
# package: ~4 s less for each of them)
pip --no-build-isolation -e agentgym/agentenv -e .
for pkg in agentgym/agentenv-*/; do
    PYTHON="$py" PIP_ARGS="--quiet -c $pins --no-build-isolation" bash "$pkg/setup.sh"
done
"$py" -m agentenv list
echo "$want" > "$stamp"
echo "setup.sh: done (.venv ready)"
