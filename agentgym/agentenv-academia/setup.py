from setuptools import setup

setup(
    name="agentenv-academia",
    version="0.1.0",
    description="AgentGym's academia tool environment (citation and co-author graphs) for agentenv servers",
    packages=["agentenv_academia"],
    python_requires=">=3.10",
    install_requires=["agentenv", "networkx>=2.8"],  # networkx: the agentgym profile's DBLP pickles
    entry_points={"agentenv.envs": ["academia = agentenv_academia.env:AcademiaEnv"]},
)
