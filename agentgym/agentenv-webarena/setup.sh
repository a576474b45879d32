#!/usr/bin/env bash
# Installs this package into $PYTHON (default: the active python), and Debian's Chromium when there is no
# `chromium`: Playwright (from PyPI) drives the system's browser, as Playwright's own browser downloads are not
# reachable from every machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/../agentenv/scripts/ensure-command.sh" chromium chromium agentenv-webarena
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
# MiniWoB++'s pages (task_set=miniwob): data only, so without the package's Selenium side
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} --no-deps miniwob==1.1.0
