#!/usr/bin/env bash
# Installs this environment package into $PYTHON (default: the active python), and a Java runtime
# (Debian's default-jre-headless) when there is no `java`: the ScienceWorld simulator is a JVM program.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! command -v java >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends default-jre-headless
    else
        echo "agentenv-sciworld needs a Java runtime (java 8 or newer) on PATH; install one and re-run" >&2
        exit 1
    fi
fi
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
