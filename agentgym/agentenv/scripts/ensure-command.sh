#!/usr/bin/env bash
# Makes sure a system program is on PATH, installing its Debian package when it is missing: the environments
# whose simulator, search engine or browser is a system program call it from their setup.sh (sciworld and webshop:
# `java` from default-jre-headless; webarena: `chromium`).
# Usage: ensure-command.sh COMMAND DEBIAN_PACKAGE WHO (WHO: who needs it, for the error message).
set -euo pipefail
command="$1" package="$2" who="${3:-this environment}"
if command -v "$command" >/dev/null 2>&1; then
    exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$package"
else
    echo "$who needs \`$command\` (Debian's $package) on PATH; install it and re-run" >&2
    exit 1
fi
