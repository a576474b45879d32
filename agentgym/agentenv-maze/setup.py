from setuptools import setup

setup(
    name="agentenv-maze",
    version="0.1.0",
    description="The maze environment (LMRL-Gym-style grid navigation) for agentenv servers",
    packages=["agentenv_maze"],
    python_requires=">=3.10",
    install_requires=["agentenv"],
    entry_points={"agentenv.envs": ["maze = agentenv_maze.env:MazeEnv"]},
)
