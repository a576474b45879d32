from setuptools import setup

setup(
    name="agentenv-babyai",
    version="0.1.0",
    description="BabyAI levels (minigrid) as an agentenv text environment",
    packages=["agentenv_babyai"],
    python_requires=">=3.10",
    install_requires=["agentenv", "minigrid==3.2.0"],
    entry_points={"agentenv.envs": ["babyai = agentenv_babyai.env:BabyAIEnv"]},
)
