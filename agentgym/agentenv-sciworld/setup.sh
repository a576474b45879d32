#!/usr/bin/env bash
# Installs this environment package into $PYTHON (default: the active python), and a Java runtime
# (Debian's default-jre-headless) when there is no `java`: the ScienceWorld simulator is a JVM program.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/../agentenv/scripts/ensure-command.sh" java default-jre-headless agentenv-sciworld
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
