#!/usr/bin/env bash
# On demand, not in CI: does requirements/gpu.txt (the GPU stack's lock) still resolve, together with the project's
# own packages and vLLM, for the GPU machine's platform (Linux x86_64, CPython 3.11, glibc >= 2.31), and is it
# complete (every package pip picks is pinned there, and nothing more)? Needs PyPI, no GPU, ~3 minutes.
#   bash scripts/check_gpu_lock.sh       (scratch venv: $GPULOCK_VENV, default /tmp/gpulock-venv; never .venv)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lock="$root/requirements/gpu.txt"
venv="${GPULOCK_VENV:-/tmp/gpulock-venv}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# PyPI alone decides: no machine-wide pip configuration (constraints, find-links, local mirrors)
pipc() { env -u PIP_FIND_LINKS -u PIP_CONSTRAINT PIP_CONFIG_FILE=/dev/null "$venv/bin/python" -m pip \
             --disable-pip-version-check "$@"; }
pinned() { sed -n "s/^$1==//p" "$lock"; }

[ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
pipc install --quiet "pip==26.3" "setuptools==$(pinned setuptools)"

# wheels of the project's packages, built from a copy (no build/ or *.egg-info in the work tree)
mkdir "$work/src" "$work/wheels"
tar -C "$root" -cf - --exclude='*.egg-info' --exclude=build --exclude=__pycache__ setup.py configs openmanus_rl agentgym \
    | tar -C "$work/src" -xf -
pkgs=("$work/src" "$work/src/agentgym/agentenv" "$work/src"/agentgym/agentenv-*/)
pipc wheel --quiet --no-deps --no-build-isolation -w "$work/wheels" "${pkgs[@]}" >/dev/null
names=$(cd "$work/wheels" && ls | sed 's/-.*//')
# pinned packages PyPI has only as an sdist (pure Python): a wheel built here serves any platform
for sdist_only in antlr4-python3-runtime; do
    pipc wheel --quiet --no-deps -w "$work/wheels" "$sdist_only==$(pinned "$sdist_only")"
done

platform=(--only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none)
for glibc in $(seq 31 -1 5); do platform+=(--platform "manylinux_2_${glibc}_x86_64"); done
platform+=(--platform manylinux2014_x86_64 --platform manylinux2010_x86_64 --platform manylinux1_x86_64)

echo "check_gpu_lock: resolving requirements/gpu.txt + $(echo $names | wc -w) project packages + vllm for" \
     "manylinux_2_31_x86_64, CPython 3.11 ..."
# shellcheck disable=SC2086
if ! pipc install --dry-run --ignore-installed --report "$work/report.json" "${platform[@]}" \
        --find-links "$work/wheels" -c "$lock" -r "$root/requirements/dev.txt" $names vllm >"$work/log" 2>&1; then
    grep -v -E '^\s*(Downloading|Collecting|Processing|Using cached|Looking in|INFO:|━)' "$work/log" | tail -20
    echo "check_gpu_lock: FAILED: pip cannot resolve requirements/gpu.txt with the project for the GPU platform"
    exit 1
fi
"$venv/bin/python" - "$work/report.json" "$lock" $names <<'EOF'
import json, re, sys
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
report, lock, own = sys.argv[1], sys.argv[2], {norm(n) for n in sys.argv[3:]}
got = {norm(i["metadata"]["name"]): i["metadata"]["version"] for i in json.load(open(report))["install"]}
got = {n: v for n, v in got.items() if n not in own}
pins = dict(l.strip().split("==") for l in open(lock) if l.strip() and not l.startswith("#"))
pins = {norm(n): v for n, v in pins.items()}
missing = sorted(f"{n}=={v}" for n, v in got.items() if n not in pins)
unused = sorted(n for n in pins if n not in got)
if missing or unused:
    print("check_gpu_lock: FAILED: requirements/gpu.txt is not the resolved set")
    print("  resolved but not pinned:", " ".join(missing) or "-")
    print("  pinned but not needed:", " ".join(unused) or "-")
    sys.exit(1)
print(f"check_gpu_lock: OK: {len(got)} third-party packages, all pinned by requirements/gpu.txt, nothing extra "
      f"(torch {got['torch']}, vllm {got['vllm']}, verl {got['verl']}, transformers {got['transformers']})")
EOF
