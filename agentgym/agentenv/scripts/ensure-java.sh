#!/usr/bin/env bash
# Makes sure a Java runtime is on PATH, installing Debian's default-jre-headless when there is none: the
# environments whose simulator or search engine is a JVM program (sciworld's ScienceWorld, webshop's Lucene in its
# agentgym profile) call it from their setup.sh. Usage: ensure-java.sh NAME (who needs it, for the error message).
set -euo pipefail
if command -v java >/dev/null 2>&1; then
    exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends default-jre-headless
else
    echo "${1:-this environment} needs a Java runtime (java 11 or newer) on PATH; install one and re-run" >&2
    exit 1
fi
