#!/usr/bin/env bash
# Behaviour cloning + AgentEvol of an LLM agent on agentenv environments with verl's SFT trainer
# (see openmanus_rl/agentevol.py).
#   ./train_agentevol.sh --env_name maze[,NAME...] [--iterations M] [--model tiny|PATH] [--output_dir DIR] [key=value ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-$root/.venv/bin/python}"
[ -x "$py" ] || { echo "train_agentevol.sh: $py not found; run 'bash setup.sh' first" >&2; exit 1; }
exec "$py" -m openmanus_rl.agentevol "$@"
