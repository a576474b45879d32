from setuptools import setup

setup(
    name="agentenv-sheet",
    version="0.1.0",
    description="AgentGym's sheet tool environment on a local, generated, in-memory spreadsheet, for agentenv servers",
    packages=["agentenv_sheet"],
    python_requires=">=3.10",
    install_requires=["agentenv"],
    entry_points={"agentenv.envs": ["sheet = agentenv_sheet.env:SheetEnv"]},
)
