from setuptools import setup

setup(
    name="agentenv-todo",
    version="0.1.0",
    description="AgentGym's todo tool environment (a Todoist-like to-do account) for agentenv servers",
    packages=["agentenv_todo"],
    python_requires=">=3.10",
    install_requires=["agentenv"],
    entry_points={"agentenv.envs": ["todo = agentenv_todo.env:TodoEnv"]},
)
