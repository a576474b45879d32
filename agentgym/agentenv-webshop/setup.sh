#!/usr/bin/env bash
# Installs this environment package into $PYTHON (default: the active python). The native game is pure Python
# (BM25 search is bm25s on numpy). Its agentgym profile searches as AgentGym's WebShop does, with Lucene: this
# also installs a Java runtime when there is none (Debian's default-jre-headless) and puts Anserini's jar from
# pyserini 0.17.0's wheel on PyPI into ~/.cache/agentenv-webshop (a 109 MB download, once; AGENTENV_WEBSHOP_LUCENE=0
# skips both).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"${PYTHON:-python}" -m pip install ${PIP_ARGS:-} -e "$here"
if [ "${AGENTENV_WEBSHOP_LUCENE:-1}" != 0 ]; then
    bash "$here/../agentenv/scripts/ensure-command.sh" java default-jre-headless "agentenv-webshop's agentgym profile"
    "${PYTHON:-python}" -m agentenv_webshop.lucene fetch
fi
