"""agentenv-wordle: the ``wordle`` environment (five-letter Wordle on wordfreq's English words)."""

from agentenv_wordle.env import WordleEnv

__all__ = ["WordleEnv"]
