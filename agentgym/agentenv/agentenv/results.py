"""What an environment server answers, as every client hands it out.

Below the clients of protocol v1 (:mod:`agentenv.client`) and of AgentGym's routes
(:mod:`agentenv.interop.agentgym_client`), so that both return the same objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Created:
    env_id: str
    observation: str
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class Step:
    observation: str
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return bool(self.info.get("success", False))

    @property
    def score(self) -> float:
        return float(self.info.get("score", 0.0))

    @property
    def valid(self) -> bool:
        return bool(self.info.get("valid", True))


@dataclass
class Suggestion:
    """A scripted policy's answer (``/policy_action``)."""

    action: str
    thought: str | None = None

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> Suggestion:
        return cls(body["action"], body.get("thought"))
