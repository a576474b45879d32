#!/usr/bin/env bash
# PPO/GRPO training of an LLM agent on agentenv environments with verl (see openmanus_rl/train.py).
#   ./train_ppo.sh --env_name maze [--algo grpo|ppo] [--model tiny|PATH] [--steps N] [--output_dir DIR] [key=value ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-$root/.venv/bin/python}"
[ -x "$py" ] || { echo "train_ppo.sh: $py not found; run 'bash setup.sh' first" >&2; exit 1; }
exec "$py" -m openmanus_rl.train "$@"
