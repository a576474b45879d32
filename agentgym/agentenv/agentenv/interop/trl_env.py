"""Any environment served here as TRL's ``GRPOTrainer(environment_factory=...)`` wants it.

TRL (``trl`` 1.12) makes one instance per rollout with the factory, calls ``reset(**row)`` with the dataset row
(the string it returns is appended to the prompt's last user message), exposes the instance's public methods as the
model's tools (their signatures and docstrings become the tool schemas), and scores a finished rollout with
``get_reward()``. :func:`environment_factory` builds that class for a server of this project (any URL
:func:`agentenv.client.client_for` reads, an OpenEnv or AgentGym server included):

- ``reset(task_id=..., split=..., seed=...)``: opens a session on that task (a row without ``task_id`` takes the next
  one of the split, round robin) and returns its first observation; the previous session of the instance is closed.
- the tools: a text environment's one action (``act(action)``), a code environment's ``run(code)``, or a tool
  environment's own tools with their argument schemas. Each returns the observation, with a line saying when the
  episode ended; a call after the end says so and changes nothing.
- ``get_reward()``: the episode's return as the environment computed it.

    from trl import GRPOConfig, GRPOTrainer
    from agentenv.interop.trl_env import environment_factory, task_rows

    factory = environment_factory("http://127.0.0.1:8000")          # agentenv serve maze --port 8000
    trainer = GRPOTrainer(model=..., args=GRPOConfig(...), train_dataset=Dataset.from_list(task_rows(factory, 64)),
                          environment_factory=factory)

``examples/trl_grpo.py`` runs it with the tiny model on the CPU.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import keyword
import re
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from agentenv.actions import ToolCall, parse_reply, parse_tool_call
from agentenv.client import client_for
from agentenv.errors import AgentEnvError
from agentenv.launcher import server_info
from agentenv.protocol import InfoResponse

__all__ = ["AgentEnvTRLEnvironment", "environment_factory", "expert_tool_call", "task_rows", "tool_call", "tool_names"]

JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                               "object": dict}
EPISODE_OVER = "The episode is over."


class AgentEnvTRLEnvironment:
    """One rollout's environment: a session on the server at ``url``. Subclasses made by :func:`environment_factory`
    add the environment's tools as methods."""

    url: str = ""
    token: str | None = None
    info: InfoResponse
    _next_task: Callable[[str], int]
    _tools: ClassVar[dict[str, str]] = {}  # method name -> the environment's name of the tool

    def __init__(self) -> None:
        # the client a URL calls for (protocol v1, OpenEnv, AgentGym), driven on this instance's own event loop:
        # TRL calls the tools synchronously, one rollout's calls one after another
        self._loop = asyncio.new_event_loop()
        self._client = client_for(self.url, token=self.token)
        self._env_id: str | None = None
        self.reward, self.done, self.success, self.turns = 0.0, False, False, 0

    def reset(self, task_id: int | None = None, split: str = "train", seed: int | None = None, **row: Any) -> str:
        """Start an episode of task ``task_id`` of ``split``; the first observation."""
        self._close()
        task = self._next_task(split) if task_id is None else int(task_id)
        created = self._call(self._client.create(task, split, seed))
        self._env_id = created.env_id
        self.reward, self.done, self.success, self.turns = 0.0, False, False, 0
        return created.observation

    def get_reward(self) -> float:
        """The episode's return."""
        return self.reward

    def _step(self, action: str) -> str:
        if self.done or self.turns >= self.info.max_turns:
            return EPISODE_OVER
        if self._env_id is None:
            return "No episode: reset first."
        try:
            step = self._call(self._client.step(self._env_id, action))
        except AgentEnvError as e:  # the server's word on it, to the model (TRL would show its own error otherwise)
            return f"Error: {e.message}"
        self.turns += 1
        self.reward += step.reward
        self.done, self.success = step.done, step.success
        if step.done or self.turns >= self.info.max_turns:
            self._close()
            self.done = True
            return f"{step.observation}\n{EPISODE_OVER} {'Task solved.' if self.success else 'Task not solved.'}"
        if step.info.get("valid") is False:
            return f"{step.observation}\n(The environment did not accept that action.)"
        return step.observation

    def _call(self, coro: Any) -> Any:
        return self._loop.run_until_complete(coro)

    def _close(self) -> None:
        if self._env_id is not None:
            env_id, self._env_id = self._env_id, None
            try:
                self._call(self._client.close(env_id))
            except AgentEnvError:
                pass

    def __del__(self) -> None:
        try:
            self._close()
            self._call(self._client.aclose())
            self._loop.close()
        except Exception:  # interpreter shutdown: nothing left to free
            pass


def _identifier(name: str, taken: set[str]) -> str:
    ident = re.sub(r"\W", "_", name).strip("_") or "tool"
    if ident[0].isdigit() or keyword.iskeyword(ident):
        ident = f"tool_{ident}"
    while ident in taken or ident in ("reset", "get_reward"):
        ident += "_"
    taken.add(ident)
    return ident


def _tool_method(name: str, description: str, parameters: dict[str, Any], *, render: Callable[..., str]) -> Callable:
    """A method whose signature and Google-style docstring state a tool's JSON schema (what TRL, through
    transformers' ``get_json_schema``, turns back into the tool's schema for the prompt)."""
    props = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    arg_lines = []
    for arg, schema in props.items():
        if not arg.isidentifier() or keyword.iskeyword(arg):
            continue  # not expressible as a keyword argument
        kind = JSON_TYPES.get(str(schema.get("type")), str)
        default = inspect.Parameter.empty if arg in required else None
        annotations[arg] = kind if arg in required else kind | None
        params.append(inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=annotations[arg]))
        arg_lines.append(f"    {arg}: {schema.get('description') or arg}")

    def method(self: AgentEnvTRLEnvironment, **kwargs: Any) -> str:
        return self._step(render(**{k: v for k, v in kwargs.items() if v is not None}))

    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    args = ("\n\nArgs:\n" + "\n".join(arg_lines)) if arg_lines else ""
    method.__doc__ = f"{description.strip() or name}{args}\n\nReturns:\n    What the environment shows next."
    return method


def environment_factory(url: str, *, token: str | None = None) -> type[AgentEnvTRLEnvironment]:
    """The class TRL's ``environment_factory`` takes (a class is a factory: one instance per rollout) for the
    environment served at ``url``."""
    info = server_info([url], token)
    counters = {split: itertools.cycle(range(n)) for split, n in info.splits.items() if n}
    lock = threading.Lock()

    def next_task(split: str) -> int:
        with lock:
            if split not in counters:
                raise ValueError(f"{info.env} has no tasks in split {split!r}")
            return next(counters[split])

    hint = info.action_hint or "the action"
    methods: dict[str, Any] = {}
    tools: dict[str, str] = {}
    taken: set[str] = set()
    if info.action_format == "tool":
        for tool in info.tools:
            ident = _identifier(tool.name, taken)
            methods[ident] = _tool_method(ident, tool.description, tool.parameters,
                                          render=lambda _n=tool.name, **kw: ToolCall(_n, kw).render())
            tools[ident] = tool.name
    elif info.action_format == "code":
        lang = info.code_language or ""
        fence = f"```{lang}\n{{code}}\n```"
        methods["run"] = _tool_method("run", f"Run {lang or 'a'} code in the environment. {info.instruction}",
                                      {"properties": {"code": {"type": "string", "description": f"the {lang} code"}},
                                       "required": ["code"]}, render=lambda code: fence.format(code=code))
        tools["run"] = "run"
    else:
        methods["act"] = _tool_method("act", f"Take one action in the environment. {info.instruction}",
                                      {"properties": {"action": {"type": "string", "description": hint}},
                                       "required": ["action"]}, render=lambda action: action)
        tools["act"] = "act"
    name = "".join(part.capitalize() for part in re.split(r"\W|_", info.env) if part) + "Environment"
    return type(name, (AgentEnvTRLEnvironment,), {**methods, "url": url, "token": token, "info": info,
                                                  "_next_task": staticmethod(next_task), "_tools": tools,
                                                  "__doc__": f"{info.env}: {info.instruction}".strip()})


def tool_names(factory: type[AgentEnvTRLEnvironment]) -> list[str]:
    """The methods TRL offers the model as tools. (Module functions, not methods: TRL takes every public method of
    the class for a tool.)"""
    return list(factory._tools)


def tool_call(factory: type[AgentEnvTRLEnvironment], action: str) -> tuple[str, dict[str, Any]]:
    """An action as the environment reads it (e.g. its expert's) as a call of one of the tools: (method, arguments)."""
    fmt = factory.info.action_format
    if fmt == "tool":
        call = parse_tool_call(action)
        method = next((k for k, v in factory._tools.items() if v == call.name), None)
        if method is None:
            raise ValueError(f"{action!r} calls no tool of {factory.info.env}")
        return method, dict(call.arguments)
    if fmt == "code":
        return "run", {"code": parse_reply(action, "code").action}
    return "act", {"action": action}


def expert_tool_call(env: AgentEnvTRLEnvironment) -> tuple[str, dict[str, Any]]:
    """The next action of the environment's expert (its server's ``expert`` policy) as a call of one of the tools:
    (method, arguments). For building demonstrations, e.g. a warm start before GRPO."""
    if env._env_id is None:
        raise ValueError("no episode: reset first")
    return tool_call(type(env), env._call(env._client.policy_action(env._env_id, "expert")))


def task_rows(factory: type[AgentEnvTRLEnvironment], n: int, split: str = "train") -> list[dict[str, Any]]:
    """A dataset for TRL: ``n`` rows, task ids ``0..n-1`` of ``split`` (cycled), each with the environment's
    instruction as the prompt (``reset`` appends the task's first observation to it)."""
    info = factory.info
    total = info.splits.get(split, 0)
    if not total:
        raise ValueError(f"{info.env} has no tasks in split {split!r}")
    instruction = info.instruction.strip() or f"Solve the {info.env} task with the tools."
    return [{"prompt": [{"role": "user", "content": f"{instruction}\n\n"}], "task_id": k % total, "split": split}
            for k in range(n)]
