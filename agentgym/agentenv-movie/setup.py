from setuptools import setup

setup(
    name="agentenv-movie",
    version="0.1.0",
    description="AgentGym's movie tools over a generated, deterministic film database, for agentenv servers",
    packages=["agentenv_movie"],
    python_requires=">=3.10",
    install_requires=["agentenv"],
    entry_points={"agentenv.envs": ["movie = agentenv_movie.env:MovieEnv"]},
)
