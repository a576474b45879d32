#!/usr/bin/env bash
# Installs this package into $PYTHON (default: the active python), and Debian's Chromium when there is no
# `chromium`: Playwright (from PyPI) drives the system's browser, as Playwright's own browser downloads are not
# reachable from every machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/../agentenv/scripts/ensure-command.sh" chromium chromium agentenv-webarena
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
