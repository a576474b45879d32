"""agentenv: text environments as HTTP services speaking one protocol (v1)."""

from agentenv.env import SPLITS, Environment, Split, StepResult
from agentenv.protocol import PROTOCOL_VERSION

__version__ = "0.1.0"

__all__ = ["PROTOCOL_VERSION", "SPLITS", "Environment", "Split", "StepResult", "__version__"]
