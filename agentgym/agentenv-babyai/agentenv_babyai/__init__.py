"""BabyAI levels from minigrid as an agentenv text environment (``babyai``)."""

from agentenv_babyai.env import BabyAIEnv

__all__ = ["BabyAIEnv"]
