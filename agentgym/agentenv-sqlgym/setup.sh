#!/usr/bin/env bash
# Installs this environment package into $PYTHON (default: the active python). Pure Python: the
# databases are SQLite files the package generates (Python's own sqlite3), so no system packages
# and no downloads are needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
