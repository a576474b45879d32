#!/usr/bin/env bash
# Installs this environment package into $PYTHON (default: the active python). Pure Python: no system packages.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
