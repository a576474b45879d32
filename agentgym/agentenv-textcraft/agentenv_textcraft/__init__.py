"""agentenv-textcraft: the ``textcraft`` environment (TextCraft, Minecraft crafting in text) for agentenv servers."""

from agentenv_textcraft.env import TextCraftEnv

__all__ = ["TextCraftEnv"]
