#!/usr/bin/env bash
# Installs this environment package into $PYTHON (default: the active python).
# geographiclib (PyPI, MIT) computes geodesic distances; no system packages are needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
