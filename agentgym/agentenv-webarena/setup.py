from setuptools import setup

setup(
    name="agentenv-webarena",
    version="0.1.0",
    description="WebArena's tasks in a real Chromium: its observations, actions and evaluators, on embedded sites "
                "or the user's",
    packages=["agentenv_webarena", "agentenv_webarena.sites"],
    python_requires=">=3.10",
    install_requires=["agentenv", "playwright==1.65.2", "psutil>=5.9", "nltk==3.10.4", "python-multipart>=0.0.9"],
    entry_points={"agentenv.envs": ["webarena = agentenv_webarena.env:WebArenaEnv"]},
)
