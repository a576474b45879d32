#!/usr/bin/env bash
# One set-up command for a fresh machine: creates .venv at the repository root and
# installs the core, every environment package under agentgym/, openmanus_rl (verl)
# and the test tools, all pinned. Re-running it is fast (skips when nothing changed).
#   bash setup.sh [--force] [--gpu | --cpu]
# Two stacks: CPU (requirements/constraints.txt, torch 2.13.0; CI's) and GPU (requirements/gpu.txt: PyPI's CUDA
# build of torch 2.11.0 and vLLM 0.24.0 for verl's vLLM rollout). GPU when `nvidia-smi -L` works or with --gpu;
# --cpu forces CPU; --force reinstalls.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root="$PWD"

force=0 stack=cpu
if nvidia-smi -L >/dev/null 2>&1; then stack=gpu; fi
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        --gpu | --cpu) stack="${arg#--}" ;;
        *) echo "usage: bash setup.sh [--force] [--gpu | --cpu]" >&2; exit 2 ;;
    esac
done
if [ "$stack" = gpu ]; then
    pins="$root/requirements/gpu.txt"
    export PIP_CONSTRAINT=/dev/null   # gpu.txt pins everything: a machine-wide pip constraint could only conflict
else
    pins="$root/requirements/constraints.txt"
fi

[ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
py="$root/.venv/bin/python"
stamp=.venv/.setup-stamp
want="$stack-$(cat setup.sh setup.py requirements/dev.txt "$pins" agentgym/*/setup.py agentgym/*/setup.sh agentgym/agentenv/scripts/*.sh \
               | sha256sum | cut -c1-16)"
if [ "$force" = 0 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "setup.sh: .venv is up to date ($stack; bash setup.sh --force reinstalls)"
    exit 0
fi

pip() { "$py" -m pip install --quiet --disable-pip-version-check -c "$pins" "$@"; }
pip "pip==26.3"
if [ "$stack" = gpu ]; then
    pip -r requirements/gpu.txt  # the whole lock: torch 2.11.0 (CUDA), vllm 0.24.0, verl, the test tools
else
    pip "torch==2.13.0"          # first, so nothing pulls another torch build
    pip -r requirements/dev.txt
fi
# the project's own packages build with the pinned setuptools just installed (no isolated build env per
# package: ~4 s less for each of them)
pip --no-build-isolation -e agentgym/agentenv -e .
for pkg in agentgym/agentenv-*/; do
    PYTHON="$py" PIP_ARGS="--quiet -c $pins --no-build-isolation" bash "$pkg/setup.sh"
done
"$py" -m agentenv list
if [ "$stack" = gpu ]; then
    "$py" -c "import torch, vllm; from verl.workers.rollout.replica import RolloutReplicaRegistry; \
RolloutReplicaRegistry.get('vllm'); print('setup.sh: torch', torch.__version__, 'CUDA', torch.version.cuda, \
'| vllm', vllm.__version__, '| verl vLLM replica imports')"
fi
echo "$want" > "$stamp"
echo "setup.sh: done (.venv ready, $stack)"
