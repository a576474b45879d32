"""AgentTraj-format trajectories: one JSON object per episode, both ways.

This project writes ``{"item_id": "<env>_<task_id>", "conversations": [{"from": "human"|"gpt", "value": str,
"loss": bool|null}, ...], "reward": float, "success": bool}`` as JSON lines, its first human turn holding the
instructions and the first observation together. It reads that, the published AgentTraj sets (one JSON array)
and AgentEval's item lists (ids only: :func:`has_conversation` is false for them). :func:`to_agentgym` and
:func:`write_agentgym` write AgentGym's own layout, which its trainer loads: one JSON array, item ids with
upstream task indices where the episode was played on AgentGym's tasks, and the instruction as a human turn of
its own that the agent answers with "Ok." (not trained on) before the first observation.

    python -m openmanus_rl.trajectories to-agentgym eval.json expert.jsonl --out agenttraj.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

_ROLE_OF = {"human": "user", "gpt": "assistant", "system": "system"}
_FROM_OF = {"user": "human", "assistant": "gpt"}


def item_id(env: str, task_id: int) -> str:
    return f"{env}_{task_id}"


def parse_item_id(value: str) -> tuple[str, int]:
    env, _, task = value.rpartition("_")
    return env, int(task)


def from_messages(env: str, task_id: int, messages: list[dict[str, str]], /, reward: float, success: bool,
                  **extra: Any) -> dict[str, Any]:
    """A chat (user/assistant messages) as an AgentTraj item; loss on the agent's turns."""
    conversations = []
    for m in messages:
        if m["role"] not in _FROM_OF:
            raise ValueError(f"AgentTraj has human and gpt turns only, not {m['role']!r}")
        conversations.append({"from": _FROM_OF[m["role"]], "value": m["content"], "loss": m["role"] == "assistant"})
    return {"item_id": item_id(env, task_id), "conversations": conversations, "reward": float(reward),
            "success": bool(success), **extra}


def to_messages(item: dict[str, Any]) -> list[dict[str, str]]:
    return [{"role": _ROLE_OF[turn["from"]], "content": turn["value"]} for turn in item["conversations"]]


def loss_mask(item: dict[str, Any]) -> list[bool]:
    """Which turns to train on: ``loss`` where given, otherwise every gpt turn."""
    return [bool(t["loss"]) if t.get("loss") is not None else t["from"] == "gpt" for t in item["conversations"]]


def json_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text. Split on "\\n" only: JSON escapes it inside strings but not
    U+2028, U+0085 and the like, which a model's reply can hold and ``str.splitlines`` would split on."""
    return text.split("\n")


def read(path: str | Path) -> Iterator[dict[str, Any]]:
    """Items of a JSON-lines file or of a file holding one JSON array."""
    text = Path(path).read_text()
    stripped = text.lstrip()
    if stripped.startswith("["):
        yield from json.loads(stripped)
        return
    for n, line in enumerate(json_lines(text), 1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not a JSON object: {e}") from e


def flagged_success(item: dict[str, Any]) -> bool:
    """The environment's own ``success`` flag where the item records it; an item without one (a published
    AgentTraj file, which holds successes only) counts as a success."""
    return bool(item.get("success", True))


def has_conversation(item: dict[str, Any]) -> bool:
    """Whether an item holds an episode (AgentEval's lists hold only ids: ``conversations`` null or absent)."""
    return bool(item.get("conversations"))


OK = "Ok."  # the agent's answer to the instruction turn in AgentGym's layout


def to_agentgym(item: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """An item in AgentGym's AgentTraj layout. The item id is ``<name>_<index>``: the upstream task index where
    the episode was played on AgentGym's tasks (``agentgym_index``), else this project's task id; ``name``
    defaults to the item's environment. The merged first turn is split where its ``first_observation`` (written
    with every episode) begins: the instruction, answered by ``Ok.`` (loss false), then the observation; an item
    without it keeps its first turn whole. Replies are trained on (loss true), observations carry loss null."""
    if not has_conversation(item):
        raise ValueError(f"{item.get('item_id')!r} holds no conversation")
    env, task_id = parse_item_id(str(item["item_id"]))
    index = int(item.get("agentgym_index", task_id))
    turns = [dict(t) for t in item["conversations"]]
    first, observation = turns[0]["value"], item.get("first_observation")
    head: list[dict[str, Any]] = []
    if turns[0]["from"] == "human" and observation and first.endswith(observation) and len(first) > len(observation):
        head = [{"from": "human", "loss": None, "value": first[: -len(observation)].rstrip()},
                {"from": "gpt", "loss": False, "value": OK}]
        turns[0] = {**turns[0], "value": observation}
    conversations = head + [{"from": t["from"], "loss": (bool(t["loss"]) if t.get("loss") is not None else True)
                             if t["from"] == "gpt" else None, "value": t["value"]} for t in turns]
    return {"item_id": f"{name or env}_{index}", "conversations": conversations}


def write_agentgym(path: str | Path, items: Iterable[dict[str, Any]], names: dict[str, str] | None = None) -> int:
    """Items with conversations, in AgentGym's layout, as one JSON array (written atomically); ``names`` maps an
    environment to its name in AgentGym's ids (e.g. ``{"maze": "lmrlgym_maze"}``). Returns how many."""
    from openmanus_rl import atomic

    names = names or {}
    out = [to_agentgym(it, names.get(parse_item_id(str(it["item_id"]))[0])) for it in items if has_conversation(it)]
    atomic.write_text(path, json.dumps(out, ensure_ascii=False, indent=1) + "\n")
    return len(out)


def read_any(path: str | Path) -> Iterator[dict[str, Any]]:
    """Items of a trajectory file, or of an evaluation result (agentenv-eval's JSON: its ``trajectories``)."""
    text = Path(path).read_text().lstrip()
    if text.startswith("{"):  # one object (a result document) or JSON lines, whose first line is one
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:  # JSON lines: more than one value
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("trajectories"), list):
            yield from doc["trajectories"]
            return
    yield from read(path)


def agentgym_names() -> dict[str, str]:
    """Each installed environment's name in AgentGym's item ids (its lists' prefix: ``lmrlgym_maze``)."""
    from agentenv import registry
    from agentenv.interop.agentgym_routes import AgentGymRoutes

    names = {}
    for env in registry.names():
        routes = getattr(registry.load(env), "agentgym", None)
        if isinstance(routes, AgentGymRoutes) and routes.item_prefix:
            names[env] = routes.item_prefix
    return names


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m openmanus_rl.trajectories",
                                description="to-agentgym: trajectory files (or agentenv-eval results) in AgentGym's "
                                            "AgentTraj layout, one JSON array its trainer loads")
    p.add_argument("command", choices=["to-agentgym"])
    p.add_argument("inputs", nargs="+", help="JSON-lines or JSON-array trajectory files, or agentenv-eval results")
    p.add_argument("--out", required=True, help="the JSON array to write")
    args = p.parse_args(argv)
    try:
        items = [it for f in args.inputs for it in read_any(f)]
    except (OSError, ValueError) as e:
        print(f"trajectories: {e}", file=sys.stderr)
        return 2
    episodes = [it for it in items if has_conversation(it)]
    if not episodes:
        print(f"trajectories: 0 episodes in {', '.join(args.inputs)} (item ids without conversations): nothing written",
              file=sys.stderr)
        return 2
    n = write_agentgym(args.out, episodes, agentgym_names())
    print(f"trajectories: {n} episodes in AgentGym's layout -> {args.out}"
          + (f" ({len(items) - n} items without a conversation left out)" if n < len(items) else ""))
    return 0


def write(path: str | Path, items: Iterable[dict[str, Any]], append: bool = False) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("a" if append else "w") as f:
        for item in items:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
            n += 1
    return n


if __name__ == "__main__":
    raise SystemExit(main())
