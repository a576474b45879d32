"""agentenv: text environments as HTTP services speaking one protocol (v1)."""

from agentenv.env import SPLITS, Environment, Split, StepResult

__version__ = "0.1.0"
PROTOCOL_VERSION = 1

__all__ = ["PROTOCOL_VERSION", "SPLITS", "Environment", "Split", "StepResult", "__version__"]
