"""AgentTraj-format trajectories: one JSON object per episode.

``{"item_id": "<env>_<task_id>", "conversations": [{"from": "human"|"gpt", "value": str,
"loss": bool|null}, ...], "reward": float, "success": bool}``: the format of the published
AgentTraj sets, which therefore load unchanged (as JSON lines or as one JSON array).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
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


def write(path: str | Path, items: Iterable[dict[str, Any]], append: bool = False) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("a" if append else "w") as f:
        for item in items:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
            n += 1
    return n
