#!/usr/bin/env bash
# Installs this environment package into $PYTHON (default: the active python).
# The real ALFWorld games are an optional extra, not installed here (heavy; see README):
#   AGENTENV_ALFWORLD_UPSTREAM=1 bash setup.sh   also installs alfworld==0.4.2 and textworld[pddl]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="$here"
if [ "${AGENTENV_ALFWORLD_UPSTREAM:-0}" = "1" ]; then
    target="$here[upstream]"
fi
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$target"
