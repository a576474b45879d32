"""A regular (non-editable) install finds its configs, and composes them, without a source checkout."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

from helpers import REPO as ROOT


def test_a_wheel_install_ships_the_configs(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path / "wheels"), str(ROOT)], check=True, cwd=tmp_path)
    venv.create(tmp_path / "venv", with_pip=False)
    py = tmp_path / "venv" / "bin" / "python"
    # the dependencies are this interpreter's, on the path after the venv's own site-packages (a plain path
    # entry: the editable installs' .pth files there are not read, so the wheel's openmanus_rl is the one found)
    site = next((tmp_path / "venv" / "lib").glob("python3*/site-packages"))
    deps = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "omegaconf").is_dir())
    (site / "dependencies.pth").write_text(deps + "\n")
    wheel = next((tmp_path / "wheels").glob("agentenv_rl-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)],
                   check=True, cwd=tmp_path)
    probe = ("import openmanus_rl, sys; from openmanus_rl.model_presets import preset_names;"
             "from openmanus_rl.configs import compose, config_dir; from openmanus_rl.verl_args import load_preset;"
             "print(openmanus_rl.__file__); print(config_dir()); print(','.join(preset_names()));"
             "print(load_preset('cpu')['actor_rollout_ref.rollout.name']);"
             "cfg = compose('ppo.yaml', ['machine=gpu', 'model=qwen2.5-7b', 'algo=ppo']);"
             "print(cfg.model.path, cfg.verl['actor_rollout_ref.rollout.name'], cfg.verl['algorithm.adv_estimator'])")
    out = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    module, configs, presets, rollout, composed = out.strip().splitlines()
    assert module.startswith(str(tmp_path / "venv")), module  # the installed copy, not the checkout
    assert configs == str(tmp_path / "venv" / "share" / "openmanus_rl" / "configs")
    assert {"tiny", "tiny-bc", "default", "qwen2.5-7b"} <= set(presets.split(","))
    assert rollout == "hf"
    assert composed == "Qwen/Qwen2.5-7B-Instruct vllm gae"  # the groups compose from the installed copy too
