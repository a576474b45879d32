from setuptools import setup

setup(
    name="agentenv-wordle",
    version="0.1.0",
    description="The wordle environment (five-letter Wordle on wordfreq's English words) for agentenv servers",
    packages=["agentenv_wordle"],
    python_requires=">=3.10",
    # wordfreq is pinned exactly: the word lists, hence the tasks, come from its data
    install_requires=["agentenv", "wordfreq==3.1.1", "numpy>=1.24"],
    entry_points={"agentenv.envs": ["wordle = agentenv_wordle.env:WordleEnv"]},
)
