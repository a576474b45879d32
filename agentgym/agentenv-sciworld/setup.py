from setuptools import setup

setup(
    name="agentenv-sciworld",
    version="0.1.0",
    description="ScienceWorld (the scienceworld simulator, one JVM per session) as an agentenv text environment",
    packages=["agentenv_sciworld"],
    python_requires=">=3.10",
    install_requires=["agentenv", "scienceworld==1.2.3", "py4j==0.10.9.9"],
    entry_points={"agentenv.envs": ["sciworld = agentenv_sciworld.env:SciWorldEnv"]},
)
