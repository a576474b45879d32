"""AgentGym's published item ids: AgentEval's test items and AgentTraj's training items, read from a path.

AgentGym-RL publishes them as ``AgentItemId/eval/<prefix>_test.json`` and ``AgentItemId/train/<prefix>_train.json``,
each a JSON list of ``{"item_id": "<prefix>_<index>"}``, where the index is the task index the upstream server's
``/reset`` takes and the prefix is the environment's name upstream (``lmrlgym_maze``, ``tool_weather``, ``webshop``;
:attr:`AgentGymRoutes.item_prefix <agentenv.interop.agentgym_routes.AgentGymRoutes.item_prefix>`). They are
reference data, not shipped: a user gives the directory (``$AGENTGYM_ITEMS`` or a command's ``--items``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from agentenv.addresses import ServerError

ITEMS_VAR = "AGENTGYM_ITEMS"  # the directory holding eval/ and train/
__all__ = ["ITEMS_VAR", "ItemsError", "PublishedItems", "items_root", "load", "read_ids"]


class ItemsError(ServerError):
    """A path that holds no published item list for an environment, or a malformed one (one line for the
    user, as a server that cannot be reached)."""


def items_root(path: str | os.PathLike | None = None) -> Path | None:
    """The directory given, else ``$AGENTGYM_ITEMS``, else None."""
    given = path if path is not None else os.environ.get(ITEMS_VAR)
    return Path(given).expanduser() if given else None


def read_ids(path: Path) -> list[tuple[str, int | None]]:
    """The item ids of one list, in its order (duplicates kept), as ``(name, index)``: ``movie_23`` is
    ``("movie", 23)``; an id that ends in no number (AgentTraj's alfworld items name their games) has index None."""
    try:
        items = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ItemsError(f"cannot read the item list {path}: {e}") from None
    if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get("item_id"), str) for i in items):
        raise ItemsError(f"{path} is not a list of {{\"item_id\": ...}} objects")
    out: list[tuple[str, int | None]] = []
    for item in items:
        head, _, index = item["item_id"].rpartition("_")
        out.append((head, int(index)) if head and index.isdigit() else (item["item_id"], None))
    return out


@dataclass(frozen=True)
class PublishedItems:
    """One environment's published items: ``test`` is AgentEval (in the file's order), ``train`` AgentTraj's
    distinct training tasks (first seen first: AgentTraj lists a task once per trajectory; empty where its items
    name no task index). ``name`` is the environment's name in the item ids (``movie`` in ``tool_movie_test.json``)."""

    name: str
    test: tuple[int, ...]
    train: tuple[int, ...]

    @property
    def splits(self) -> dict[str, tuple[int, ...]]:
        return {"train": self.train, "test": self.test}

    def item_id(self, index: int) -> str:
        return f"{self.name}_{index}"


def load(root: str | os.PathLike, prefix: str) -> PublishedItems:
    """The published items of the environment whose lists are named ``prefix`` (``<prefix>_test.json``), from
    ``root`` (``AgentItemId``): its AgentEval list must be there; its AgentTraj list may be missing."""
    root = Path(root)
    test_file, train_file = root / "eval" / f"{prefix}_test.json", root / "train" / f"{prefix}_train.json"
    if not test_file.is_file():
        raise ItemsError(f"{root} holds no AgentEval list for {prefix} (expected {test_file})")
    test = read_ids(test_file)
    names = {name for name, _ in test}
    if len(names) != 1 or any(index is None for _, index in test):
        raise ItemsError(f"{test_file}: AgentEval's ids are NAME_<index> of one environment, not {sorted(names)[:3]}")
    train = read_ids(train_file) if train_file.is_file() else []
    indices = [index for name, index in train if index is not None and name in names]
    return PublishedItems(names.pop(), tuple(i for _, i in test), tuple(dict.fromkeys(indices)))
