"""Small environments written with OpenEnv's own server library (``openenv`` from PyPI), for the inbound tests:
this project drives them through ``--server NAME=openenv+ws://...`` as it drives its own.

- :class:`DoorsEnv`: the learning test's fork (tests/helpers/toy_envs.py's ``ForkEnv``, the same texts and
  rewards) as an OpenEnv environment: a text action (one string field), the reward at the end;
  :class:`FlippedDoorsEnv` pays for ``right`` instead.
- :class:`LockEnv`: a combination lock whose action has two integer fields (a tool call here): set ``digit`` at
  ``position``; open when the digits are the seed's code. A wrong type is refused by OpenEnv's validation.
- :class:`CounterMCPEnv`: an MCP environment (OpenEnv's ``MCPEnvironment`` on FastMCP): tools ``add(n)`` and
  ``peek()``, the episode won when the count reaches the seed's target.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

from fastmcp import FastMCP
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.mcp_types import CallToolObservation
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from agentenv.testing import serve_app_in_thread

from helpers.toy_envs import ForkEnv


class DoorAction(Action):
    door: str = Field(description=ForkEnv.action_hint)


class TextObservation(Observation):
    text: str
    success: bool | None = None


class DoorsEnv(Environment):
    """Two doors, then two more; every ``left`` earns ``left_pays``, any other reply than left or right costs 0.5."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    left_pays = ForkEnv.left_pays
    name = "fork"

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self.total = 0.0

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> TextObservation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        self.total = 0.0
        return TextObservation(text="You stand before two doors: left and right. Choose one.")

    def step(self, action: DoorAction, timeout_s: float | None = None, **kwargs: Any) -> TextObservation:
        door = action.door.strip().lower()
        valid = door in ("left", "right")
        self.total += self.left_pays if door == "left" else 0.0 if valid else -0.5
        self._state.step_count += 1
        if self._state.step_count == 1:
            return TextObservation(text=ForkEnv.CORRIDOR.format(door=door if valid else "wrong"), reward=0.0)
        return TextObservation(text="You are through.", reward=self.total, done=True, success=self.total >= 1.0)

    @property
    def state(self) -> State:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name=self.name, description=ForkEnv.instruction, version="1.0")


class FlippedDoorsEnv(DoorsEnv):
    left_pays = -0.5
    name = "fork_flipped"


class LockAction(Action):
    position: int = Field(ge=0, le=2, description="which dial, 0-2")
    digit: int = Field(ge=0, le=9, description="the digit to set it to")


class LockObservation(Observation):
    dials: list[int]
    message: str


class LockEnv(Environment):
    """Three dials at 0; the code is the seed's last three digits (task k of a split: seed k)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self.code, self.dials = [0, 0, 0], [0, 0, 0]
        self.seeds: list[int | None] = []  # what reset was given, for the tests

    def reset(self, seed: int | None = None, episode_id: str | None = None) -> LockObservation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        self.code = [int(c) for c in f"{(seed or 0) % 1000:03d}"]
        self.dials = [0, 0, 0]
        return LockObservation(dials=list(self.dials), message=f"Open the lock. Code hint: {seed}")

    def step(self, action: LockAction, timeout_s: float | None = None, **kwargs: Any) -> LockObservation:
        self._state.step_count += 1
        self.dials[action.position] = action.digit
        opened = self.dials == self.code
        return LockObservation(dials=list(self.dials), message="It opens." if opened else "Still locked.",
                               reward=1.0 if opened else 0.0, done=opened)

    @property
    def state(self) -> State:
        return self._state


class CounterMCPEnv(MCPEnvironment):
    """Count up to the target with MCP tools; each call past it is wasted. Reward 1 when the count hits the target."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        mcp = FastMCP("counter")
        self.count, self.target = 0, 3

        @mcp.tool
        def add(n: int) -> str:
            """Add n to the counter.

            Args:
                n: how much to add (1-5)
            """
            if not 1 <= n <= 5:
                raise ValueError("n must be 1-5")
            self.count += n
            return f"The count is {self.count}."

        @mcp.tool
        def peek() -> str:
            """Say the count."""
            return f"The count is {self.count}."

        super().__init__(mcp)
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> TextObservation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        self.count, self.target = 0, 3 + (seed or 0) % 5
        return TextObservation(text=f"Count to exactly {self.target} with add(n).")

    async def step_async(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        observation = await super().step_async(action, timeout_s=timeout_s, **kwargs)
        if isinstance(observation, CallToolObservation):
            self._state.step_count += 1
            observation.done = self.count >= self.target
            observation.reward = 1.0 if self.count == self.target else 0.0
        return observation

    def _step_impl(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> TextObservation:
        return TextObservation(text="Use the tools.")

    @property
    def state(self) -> State:
        return self._state


@contextlib.contextmanager
def serve_openenv(env_cls: type[Environment], action_cls: type[Action], observation_cls: type[Observation],
                  max_concurrent_envs: int = 64) -> Iterator[str]:
    """The environment served by OpenEnv's own FastAPI app on a free loopback port: its ``ws://`` base URL."""
    app = create_fastapi_app(env_cls, action_cls, observation_cls, max_concurrent_envs=max_concurrent_envs)
    with serve_app_in_thread(app) as url:
        yield url.replace("http://", "ws://", 1)
