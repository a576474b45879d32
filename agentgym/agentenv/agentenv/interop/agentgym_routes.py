"""How an AgentGym environment server speaks: its routes' differences, declared on the environment.

AgentGym gives every environment its own FastAPI server. They share one life cycle (``POST
/create`` -> a handle, ``POST /reset`` with the handle and a task index, ``POST /step`` with the
handle and the action) but differ in details: the handle's name (``id`` or ``env_idx``), the task
index's name (``data_idx``, ``game``, ``seed``, ``session_id``, ``item_id``, ``id``), a URL prefix
(``/maze``), what ``/create`` and ``/reset`` return, whether the observation key of a step is
``observation`` or ``state``, and whether the reward a client reads is ``reward`` or a ``score``.
An environment states its differences once, as ``agentgym = AgentGymRoutes(...)`` on its class;
from that, :mod:`agentenv.interop.agentgym_server` serves AgentGym's routes for the environment and
:mod:`agentenv.interop.agentgym_client` drives an original AgentGym server of it.

AgentGym servers report errors as HTTP 200 with ``{"error": message}`` (the ``id`` family) or as
HTTP 500 (the ``env_idx`` family); the server half answers the same way, and the client half turns
both into the project's exceptions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentenv.env import Environment
from agentenv.errors import NotSupported

#: what AgentGym's client writes between a first observation and the available actions it lists after it
ACTIONS_LINE = "\nAVAILABLE ACTIONS: "


@dataclass(frozen=True)
class AgentGymRoutes:
    """How AgentGym's server of one environment speaks (declared on the environment class)."""

    #: URL prefix of the routes (LMRL-Gym's server serves maze under "/maze", wordle under "/wordle")
    prefix: str = ""
    #: the handle's name in bodies and queries: "id" (its /create returns {"id": n}) or "env_idx"
    #: (its /create returns a bare int)
    handle: Literal["id", "env_idx"] = "id"
    #: the name of the task index in /reset's body
    reset_key: str = "data_idx"
    #: other fields AgentGym's client sends with /reset (e.g. {"world_type": "Text"})
    reset_extra: Mapping[str, Any] = field(default_factory=dict)
    #: the body AgentGym's client sends with /create (None: no body)
    create_body: Mapping[str, Any] | None = None
    #: the name of the task index in /create's body, for servers that create a session for a task
    #: (AgentGym's tool servers: {"id": N}); /reset then names it again
    create_key: str | None = None
    #: what /reset returns in the env_idx family: "pair" ([observation, null]) or "string"
    reset_returns: Literal["object", "pair", "string"] = "object"
    #: an environment method whose value is /reset's whole answer, where upstream's answers more than the
    #: observation (AgentGym's WebArena: the page's text, the task's sites and its objective); None: ``reset_returns``
    reset_method: str | None = None
    #: what /create answers in the env_idx family: the bare handle, or ``{"env_idx": handle}`` (AgentGym's WebArena)
    create_returns: Literal["handle", "object"] = "handle"
    #: the name of /step's done flag in the env_idx family: "done", or "terminated" with "truncated" beside it
    #: (Gymnasium's names, which AgentGym's WebArena server uses)
    step_done: Literal["done", "terminated"] = "done"
    #: what /close answers in the env_idx family (AgentGym's WebArena: ``{"closed": "closed"}``)
    close_returns: Any = True
    #: the observation's key in /step's answer
    step_observation: Literal["observation", "state"] = "observation"
    #: the scale of the "score" AgentGym's client reads as the reward (100 for 0-100 scores); None:
    #: its client reads "reward"
    score_scale: float | None = None
    #: the "reward" of the server's /step is a running score (the best so far, repeated every step, as
    #: AgentGym's sheet server sends it), not this step's increment
    running_reward: bool = False
    #: how AgentGym's client composes the first observation it shows: "observation" (as reset returns
    #: it), "available_actions" (followed by "AVAILABLE ACTIONS: a,b,..."), "task_description" (after it)
    first_observation: Literal["observation", "available_actions", "task_description"] = "observation"
    #: the order in which this project's splits fill AgentGym's one index space when serving
    index_order: tuple[str, ...] = ("train", "test")
    #: the index ranges of the splits on an original AgentGym server, when driving one without the published item
    #: lists (with them, :mod:`agentenv.interop.agentgym_items`, the splits are AgentEval's and AgentTraj's items)
    upstream_splits: Mapping[str, tuple[int, int]] = field(default_factory=lambda: {"train": (0, 0), "test": (0, 0)})
    #: the environment's name in AgentGym's item ids (``lmrlgym_maze_18``, ``tool_weather_3``); None: its own name
    item_prefix: str | None = None
    #: the original server has POST /close
    has_close: bool = True
    #: extra GET routes: path -> name of an environment method answering it (e.g. {"/filtered_vocab": ...})
    extras: Mapping[str, str] = field(default_factory=dict)
    #: what GET / answers
    hello: str = "This is an agentenv environment in AgentGym's protocol."
    #: server options ``--compat agentgym`` applies unless given (e.g. AgentGym's own action set, its profile)
    options: Mapping[str, Any] = field(default_factory=dict)
    #: the game's rules, which AgentGym's client (not its server) shows before the first observation: a
    #: profile's first observation is ``rules + "\n" + observation``, its AgentGym routes answer without them,
    #: and driving an original server the client puts them in front (in this project's words)
    rules: str = ""
    #: the original server ends episodes at the environment's ``max_turns`` too; False where it has no turn limit
    #: of its own (a profile's ``max_turns`` is then AgentGym's evaluation round limit, its client's business)
    server_truncates: bool = True
    #: upstream indices that ``check_environment`` plays through these routes when the check of another profile
    #: delegates to this one (quick tasks its expert solves within ``max_turns``); empty: the check's own
    check_tasks: tuple[int, ...] = ()
    #: what AgentGym's client's replies put before the action, where the original server reads the action only after
    #: it (the Toolusage servers' "Action: "); this project's agent loop sends the action alone
    action_prefix: str = ""

    @property
    def id_family(self) -> bool:
        return self.handle == "id"

    def create_json(self, index: int) -> dict[str, Any] | None:
        """The body AgentGym's client sends with /create for task ``index`` (None: no body)."""
        body = dict(self.create_body) if self.create_body is not None else None
        if self.create_key:
            body = {**(body or {}), self.create_key: index}
        return body

    def client_action(self, action: str) -> str:
        """An action as AgentGym's client sends it to the original server: after :attr:`action_prefix` unless the
        text has it already (a whole reply)."""
        marker = self.action_prefix.strip()
        return action if not marker or marker in action else self.action_prefix + action

    def with_rules(self, observation: str) -> str:
        """A first observation as AgentGym's client shows it: the rules (where its client has them) in front."""
        return f"{self.rules}\n{observation}" if self.rules else observation

    def served_first(self, observation: str) -> str:
        """A first observation as AgentGym's server answers it: without the rules its client shows before it and,
        where its client lists the available actions after it, without that list."""
        head = self.rules + "\n"
        if self.rules and observation.startswith(head):
            observation = observation[len(head):]
        if self.first_observation == "available_actions" and ACTIONS_LINE in observation:
            observation = observation.rsplit(ACTIONS_LINE, 1)[0]
        return observation

    def listed(self, observation: str, actions: Sequence[str]) -> str:
        """A first observation with the available actions after it, as AgentGym's client shows them where it does
        (``first_observation="available_actions"``)."""
        if self.first_observation != "available_actions":
            return observation
        return observation + ACTIONS_LINE + ",".join(actions)


def routes_of(env_cls: type[Environment]) -> AgentGymRoutes:
    routes = getattr(env_cls, "agentgym", None)
    if not isinstance(routes, AgentGymRoutes):
        raise NotSupported(f"environment {env_cls.name!r} declares no AgentGym routes (agentgym = AgentGymRoutes(...))")
    return routes
