"""openmanus_rl: the verl plugin (agent loop, rewards, datasets, trainers, evaluation, CPU support)."""

from pathlib import Path

from setuptools import find_packages, setup

# configs/ (experiment, model and machine presets) goes with a regular install too, under
# <prefix>/share/openmanus_rl/configs, where openmanus_rl.verl_cpu.presets.config_dir() finds it
CONFIGS = [(str(Path("share/openmanus_rl") / d.relative_to(".")), [str(f) for f in sorted(d.glob("*.yaml"))])
           for d in [Path("configs"), *sorted(p for p in Path("configs").iterdir() if p.is_dir())]]

setup(
    name="agentenv-rl",  # the project's name; its import name stays openmanus_rl
    version="0.1.0",
    packages=find_packages(include=["openmanus_rl", "openmanus_rl.*"]),
    data_files=CONFIGS,
    python_requires=">=3.10",
    # versions pinned in requirements/constraints.txt
    install_requires=["agentenv", "verl[verl-core]==0.9.1", "matplotlib", "pandas", "pyarrow", "pyyaml", "omegaconf",
                      "httpx", "tqdm", "transformers", "tokenizers"],
    entry_points={
        "verl.plugins": ["openmanus_verl_cpu = openmanus_rl.verl_cpu.plugin"],
        "vllm.general_plugins": ["openmanus_vllm_cpu = openmanus_rl.verl_cpu.vllm_cpu:register"],
        # agentenv-eval: AgentEval for this project; openmanus-eval, its earlier name, stays for a release
        "console_scripts": ["agentenv-eval = openmanus_rl.evaluate:main",
                            "openmanus-eval = openmanus_rl.evaluate:main"],
    },
)
