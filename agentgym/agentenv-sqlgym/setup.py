from setuptools import setup

setup(
    name="agentenv-sqlgym",
    version="0.1.0",
    description="SQLGym (BIRD-style text-to-SQL on SQLite databases, read-only and time-limited) for agentenv servers",
    packages=["agentenv_sqlgym"],
    python_requires=">=3.11",
    install_requires=["agentenv", "pydantic==2.14.3"],
    entry_points={"agentenv.envs": ["sqlgym = agentenv_sqlgym.env:SqlGymEnv"]},
)
