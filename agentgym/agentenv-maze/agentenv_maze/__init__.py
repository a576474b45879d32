"""agentenv-maze: the ``maze`` environment (LMRL-Gym-style grid navigation) for agentenv servers."""

from agentenv_maze.env import MazeEnv

__all__ = ["MazeEnv"]
