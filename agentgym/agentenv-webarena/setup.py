from setuptools import setup

setup(
    name="agentenv-webarena",
    version="0.1.0",
    description="WebArena's interface (accessibility-tree observations, id-based actions) in a real Chromium",
    packages=["agentenv_webarena"],
    python_requires=">=3.10",
    install_requires=["agentenv", "playwright==1.65.2", "psutil>=5.9"],
    # no environment entry point yet: the environment (its sites, tasks and expert) lands with issue #32's rest
)
