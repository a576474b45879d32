"""openmanus_rl: the verl plugin (agent loop, rewards, datasets, trainers, evaluation, CPU support)."""

from setuptools import find_packages, setup

setup(
    name="openmanus-rl",
    version="0.1.0",
    packages=find_packages(include=["openmanus_rl", "openmanus_rl.*"]),
    python_requires=">=3.10",
    # versions pinned in requirements/constraints.txt
    install_requires=["agentenv", "verl[verl-core]==0.9.1", "matplotlib", "pandas", "pyarrow", "pyyaml", "omegaconf",
                      "httpx", "tqdm", "transformers", "tokenizers"],
    entry_points={
        "verl.plugins": ["openmanus_verl_cpu = openmanus_rl.verl_cpu.plugin"],
        "vllm.general_plugins": ["openmanus_vllm_cpu = openmanus_rl.verl_cpu.vllm_cpu:register"],
        "console_scripts": ["openmanus-eval = openmanus_rl.evaluate:main"],
    },
)
