"""The part every LLM policy shares: the episode's chat, the prompts, the action parser.

A :class:`ChatPolicy` keeps one chat per episode, built only from :mod:`openmanus_rl.prompts`
(the prompts training uses, for the environment's action format as its server declares it), asks
a :class:`ChatBackend` for the next reply and sends the action :func:`~openmanus_rl.prompts.read_reply`
reads from it. A reply in no accepted form, or cut by the token budget, is sent as it is (the
environment then decides whether it understood it) and counts as a format error. The raw replies
are kept on the episode's turns, so the evaluator can rebuild the exact chat the model saw.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from agentenv.client import EnvSession
from agentenv.policies import Decision, Policy
from agentenv.protocol import InfoResponse
from agentenv.rollout import Episode
from openmanus_rl import per_env, prompts


@dataclass(frozen=True)
class GenerationSettings:
    """Sampling settings shared by every backend. Temperature 0 means greedy decoding. ``max_new_tokens`` may be a
    mapping per environment (:mod:`openmanus_rl.per_env`): one model's replies differ tenfold between environments."""

    max_new_tokens: int | Mapping[str, int] = 256
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0

    def reply_budget(self, env: str) -> int:
        return int(per_env.value_for(self.max_new_tokens, env, "max_new_tokens"))


@dataclass(frozen=True)
class ChatRequest:
    """One reply wanted: the chat so far, and which episode turn it is for."""

    messages: list[dict[str, str]]
    env: str
    task_id: int
    turn: int

    @property
    def key(self) -> tuple[str, int, int]:
        """Orders requests within a batch, so a batch's layout never depends on arrival order."""
        return (self.env, self.task_id, self.turn)

    def seed(self, base: int) -> int:
        """A sampling seed of its own (stable across runs and processes)."""
        digest = hashlib.sha256(f"{base}:{self.env}:{self.task_id}:{self.turn}".encode()).digest()
        return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


@dataclass(frozen=True)
class Reply:
    text: str
    cut: bool = False  # generation stopped at the token budget, not because the model finished


class ChatBackend(Protocol):
    """Turns chats into replies: a local model (batched) or a served one."""

    async def start(self) -> None:
        """Called once in the event loop before any episode (e.g. to ask an endpoint for its model)."""

    async def reply(self, request: ChatRequest) -> Reply: ...

    def plan(self, episodes: int, concurrency: int) -> None:
        """How many episodes the next run has and how many run at once (for batching)."""

    def episode_finished(self) -> None:
        """One planned episode finished for good (it will send no more requests)."""

    def stats(self) -> dict[str, float]:
        """Counters worth reporting (batch sizes, requests)."""

    async def aclose(self) -> None: ...


@dataclass
class _Chat:
    info: InfoResponse
    task_id: int
    messages: list[dict[str, str]] = field(default_factory=list)
    replies: int = 0


class ChatPolicy(Policy):
    """An LLM playing through a :class:`ChatBackend`, one chat per episode."""

    def __init__(self, name: str, backend: ChatBackend, settings: GenerationSettings) -> None:
        self.name = name
        self.backend = backend
        self.settings = settings
        self._chats: dict[int, _Chat] = {}  # by id(session): one per running episode

    async def start(self) -> None:
        await self.backend.start()
        self.name = getattr(self.backend, "label", None) or self.name  # e.g. the model an endpoint named

    def plan(self, episodes: int, concurrency: int) -> None:
        """Tell the backend the next run's size (lockstep batching needs it, see ``policies.hf``)."""
        self.backend.plan(episodes, concurrency)

    async def begin(self, session: EnvSession, episode: Episode) -> None:
        self._chats[id(session)] = _Chat(session.env_info or prompts.as_info(episode.env), episode.task_id)

    async def act(self, session: EnvSession, observation: str) -> Decision:
        chat = self._chats[id(session)]
        if not chat.messages:
            chat.messages = prompts.initial_messages(chat.info, observation)
        else:
            chat.messages.append(prompts.observation_message(observation))
        request = ChatRequest(list(chat.messages), chat.info.env, chat.task_id, chat.replies)
        reply = await self.backend.reply(request)
        chat.messages.append({"role": "assistant", "content": reply.text})
        chat.replies += 1
        return prompts.read_reply(chat.info, reply.text, cut=reply.cut)

    async def end(self, session: EnvSession, episode: Episode, error: BaseException | None) -> None:
        self._chats.pop(id(session), None)
        if error is None:  # an aborted attempt is rerun, so it still counts as running
            self.backend.episode_finished()

    def stats(self) -> dict[str, float]:
        return self.backend.stats()

    async def aclose(self) -> None:
        await self.backend.aclose()
