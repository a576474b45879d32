#!/usr/bin/env bash
# Installs this environment package into $PYTHON (default: the active python). Pure Python: BM25
# search is bm25s on numpy, so no JVM, no system packages and no downloads are needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
