from setuptools import setup

setup(
    name="agentenv-alfworld",
    version="0.1.0",
    description="ALFWorld household tasks (generated rooms, or the real games via alfworld) for agentenv servers",
    packages=["agentenv_alfworld"],
    python_requires=">=3.10",
    # the generated tasks need nothing but the core; pydantic comes with it
    install_requires=["agentenv"],
    # the real ALFWorld games (--option data_path=...): heavy (spacy, a C++ build of fast-downward
    # and jericho, ~400 MB, minutes to install), so only on request: pip install 'agentenv-alfworld[upstream]'
    extras_require={"upstream": ["alfworld==0.4.2", "textworld[pddl]==1.7.0"]},
    entry_points={"agentenv.envs": ["alfworld = agentenv_alfworld.env:AlfWorldEnv"]},
)
