"""agentenv-alfworld: ALFWorld's household tasks (TextWorld rendering of ALFRED) for agentenv servers."""

from agentenv_alfworld.env import AlfWorldEnv

__all__ = ["AlfWorldEnv"]
