"""Expert demonstrations inside RL groups (``agent.demos``): one sample of a task's group replays an expert.

RL from behaviour cloning starts from a model cloned on expert episodes and then never sees them again; where
the model almost never succeeds (a group of failures has no advantage), it has nothing to learn from. With
``agent.demos`` set, the first sample of each training group whose task has a recorded successful expert
episode replays that episode's replies instead of sampling (on the real environment server, so its reward is
the environment's), and the group's advantage compares the expert with the model's own samples: the
off-policy guidance of LUFFY (Yan et al. 2025) and, before it, demo-augmented policy gradients (DAPG,
Rajeswaran et al. 2018). The replayed tokens are not the model's samples, so PPO's old log-probs must be the
actor's own (``algorithm.rollout_correction.bypass_mode=false``; ``train_ppo.sh`` sets it).

``agent.demos`` is a directory holding ``<env>.jsonl`` files (AgentTraj items, e.g. AgentEvol's ``expert/``
of the BC the run starts from, which keeps RL to the demonstrations BC saw) or a mapping ``{env: file}``. A
replay follows its recording only while the environment says what it said then; where it differs (or the
recording ends first) the model takes over for the rest of the episode.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from openmanus_rl import trajectories


@dataclass(frozen=True)
class Demo:
    """One recorded episode: the user turns it saw and the replies it gave, in order."""

    observations: tuple[str, ...]  # the k-th user turn, which the k-th reply answered
    replies: tuple[str, ...]

    def reply(self, turn: int, observation: str) -> str | None:
        """The recorded reply of ``turn`` if the episode is still where the recording was, else None."""
        if turn < len(self.replies) and self.observations[turn] == observation:
            return self.replies[turn]
        return None


def file_for(spec: str | dict[str, str] | None, env: str) -> Path | None:
    """``env``'s demonstration file under ``spec`` (a directory's ``<env>.jsonl``, or the mapping's entry),
    None where it names none."""
    if not spec:
        return None
    if isinstance(spec, dict):
        return Path(spec[env]) if spec.get(env) else None
    path = Path(spec) / f"{env}.jsonl"
    return path if path.is_file() else None


def files(spec: str | dict[str, str] | None, envs: Iterable[str]) -> dict[str, Path]:
    """The demonstration file of each of ``envs`` that has one, checked before a run starts: a directory
    must exist, a mapping may name only ``envs`` and only files that exist."""
    envs = list(envs)
    if not spec:
        return {}
    if isinstance(spec, dict):
        unknown = sorted(set(map(str, spec)) - set(envs))
        if unknown:
            raise ValueError(f"agent.demos names {', '.join(unknown)}, which this run does not train on")
    elif not Path(spec).is_dir():
        raise ValueError(f"agent.demos: {spec} is not a directory (give one of <env>.jsonl files, or a "
                         "mapping {env: file})")
    out = {env: path for env in envs if (path := file_for(spec, env)) is not None}
    missing = [str(p) for p in out.values() if not p.is_file()]
    if missing:
        raise ValueError(f"agent.demos: no such file: {', '.join(missing)}")
    return out


def load(path: str | Path, env: str) -> dict[int, Demo]:
    """``env``'s successful recorded episodes by task id (an item whose ``success`` is false is left out; a
    published AgentTraj file records only successes and has no flag)."""
    out: dict[int, Demo] = {}
    for item in trajectories.read(path):
        if not trajectories.has_conversation(item) or not trajectories.flagged_success(item):
            continue
        item_env, task_id = trajectories.parse_item_id(str(item["item_id"]))
        if item_env != env:
            continue
        turns = item["conversations"]
        observations = tuple(t["value"] for t in turns[0::2])
        replies = tuple(t["value"] for t in turns[1::2])
        if any(t["from"] != "human" for t in turns[0::2]) or any(t["from"] != "gpt" for t in turns[1::2]):
            raise ValueError(f"{path}: {item['item_id']} does not alternate human and gpt turns")
        out.setdefault(task_id, Demo(observations[: len(replies)], replies))
    return out


class Claims:
    """Which samples of a training group replay the demonstration: the first ``per_group`` that ask.

    A group is a task at a training step. verl hands a group's samples to one rollout worker (its batch
    is split into contiguous chunks, a group's samples side by side), whose agent loops share this process,
    so counting here gives each group its demos; a group split across two workers gets up to
    ``per_group`` from each.
    """

    def __init__(self, per_group: int, keep_steps: int = 4) -> None:
        self.per_group, self.keep_steps = per_group, keep_steps
        self.given: dict[tuple[int, str, int], int] = {}

    def claim(self, step: int, env: str, task_id: int) -> bool:
        key = (step, env, task_id)
        n = self.given.get(key, 0)
        if n >= self.per_group:
            return False
        self.given[key] = n + 1
        if len(self.given) > 4096:  # forget finished steps
            self.given = {k: v for k, v in self.given.items() if k[0] > step - self.keep_steps}
        return True
