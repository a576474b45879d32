"""The expert: minigrid's BabyAI bot, advising on a shadow copy of the episode.

The bot is stateful (it remembers what it has seen and keeps a plan stack) and expects
``replan`` once per step. Stepping it on every agent action would cost ~0.5 ms a step even
when nobody asks for advice, so it runs on its own copy of the level (the "shadow") and
catches up lazily: when asked, it replays the actions taken since it last looked, one
``replan`` per action, exactly as in minigrid's advising mode. Because the shadow is a
separate object, the bot can never disturb the episode the agent plays. If the bot's plan
breaks (it asserts on some states an agent can create, e.g. an opened box), it restarts
from the current state.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice

from minigrid.core.actions import Actions
from minigrid.envs.babyai.core.verifier import GoToInstr, OpenInstr, PickupInstr, PutNextInstr
from minigrid.utils.baby_ai_bot import BabyAIBot

from agentenv_babyai import highlevel
from agentenv_babyai.levels import LevelSpec, make_level


class Expert:
    def __init__(self) -> None:
        self._shadows: dict[str, object] = {}  # level name -> shadow level object, reused
        self._shadow = None
        self._bot: BabyAIBot | None = None
        self._applied = 0
        self._suggestion: int | None = None
        self._spec: LevelSpec | None = None
        self._seed = 0
        self._build: Callable[[], object] | None = None

    def start(self, spec: LevelSpec, seed: int, build: Callable[[], object] | None = None) -> None:
        """Forget the previous episode; nothing is computed until advice is asked for. ``build``: makes the
        shadow, a level ready at the episode's start (default: the spec's level reset with ``seed``)."""
        self._spec, self._seed, self._build = spec, seed, build
        self._shadow = self._bot = self._suggestion = None
        self._applied = 0

    def action(self, env, history: list[int]) -> int | None:
        """The bot's next minigrid action for ``env`` after ``history``; None if it has no plan."""
        if self._shadow is None and self._build is not None:
            self._shadow, self._applied = self._build(), 0
            self._fresh_bot()
        elif self._shadow is None:
            shadow = self._shadows.get(self._spec.name)
            if shadow is None:
                shadow = self._shadows[self._spec.name] = make_level(self._spec)
            shadow.reset(seed=self._seed)
            self._shadow, self._applied = shadow, 0
            self._fresh_bot()
        shadow = self._shadow
        while self._applied < len(history):
            a = history[self._applied]
            shadow.step(a)
            self._applied += 1
            if self._bot is not None:
                try:
                    self._suggestion = self._bot.replan(None if a == self._suggestion else a)
                except Exception:  # the plan no longer fits this state: plan afresh below
                    self._bot = None
        if tuple(shadow.agent_pos) != tuple(env.agent_pos) or shadow.agent_dir != env.agent_dir:
            raise RuntimeError("expert shadow diverged from the episode")  # minigrid is deterministic
        if self._bot is None or self._suggestion == Actions.done:
            self._fresh_bot()
        return None if self._suggestion in (None, Actions.done) else int(self._suggestion)

    def lookahead(self, env, history: list[int], limit: int) -> list[int]:
        """The bot's next ``limit`` minigrid actions from the state after ``history`` (fewer where its plan
        ends), as it would take them; played on a copy, so the shadow and the bot stay as they were."""
        return [act for act, _ in islice(self._play_plan(env, history), limit)]

    def steps_to_finish(self, env, history: list[int], limit: int = 64) -> int | None:
        """How many minigrid steps the bot needs from the state after ``history`` to complete the mission,
        played on a copy; None when its plan breaks, runs out of the level's steps or exceeds ``limit``.
        The potential of the ``progress_reward`` option: the bot explores what it has not seen, so this is a
        distance over what the episode has shown, not over the hidden map."""
        for n, (_, (_, reward, terminated, truncated, _)) in enumerate(islice(self._play_plan(env, history), limit), 1):
            if terminated:
                return n if reward > 0 else None
            if truncated:
                return None
        return None

    def _play_plan(self, env, history: list[int]) -> Iterator[tuple[int, tuple]]:
        """The bot's plan from the state after ``history``, played on a copy of the shadow and the bot: each
        action with minigrid's step result, until the plan ends or breaks (the moves before still stand)."""
        act = self.action(env, history)
        if act is None or self._bot is None:
            return
        shadow, bot = copy.deepcopy((self._shadow, self._bot))
        while act is not None and act != Actions.done:
            yield int(act), shadow.step(act)
            try:
                act = bot.replan(None)
            except Exception:  # the plan broke on the copy
                return

    def _fresh_bot(self) -> None:
        try:
            self._bot = BabyAIBot(self._shadow)
            self._suggestion = self._bot.replan()
        except Exception:
            self._bot, self._suggestion = None, None


@dataclass(frozen=True)
class Advice:
    """The high-level expert's next action and the reason it would give."""

    text: str
    thought: str


_PRIMITIVE_TEXT = {highlevel.LEFT: "turn left", highlevel.RIGHT: "turn right", highlevel.FORWARD: "move forward",
                   highlevel.DROP: "drop", highlevel.TOGGLE: "toggle"}

_NEIGHBOURS = ((1, 0), (0, 1), (-1, 0), (0, -1))


class HighLevelExpert:
    """The expert of the agentgym action set: it plans with the high-level actions themselves.

    It reads the mission (minigrid's instruction objects: which objects count) and acts on what the
    observation shows: ``go to`` / ``pickup`` / ``toggle and go through`` the right visible object, picks
    up the key a locked door needs, and for "put X next to Y" walks (with turns and moves) to face an
    empty cell beside Y and drops. When nothing it needs is in sight or reachable, it takes the BabyAI
    bot's primitive move (the bot explores), so demonstrations stay explainable from the observations.
    """

    def __init__(self) -> None:
        self._cached: tuple[object, Advice] | None = None  # (table, advice): expert_thought and _action share it

    def action(self, level, table: highlevel.Table, bot: Callable[[], int | None], sighted: set[int]) -> Advice:
        """The next action for the state ``table`` describes; ``sighted``: ids of the objects the
        episode's observations have shown so far (what an agent could remember)."""
        if self._cached is not None and self._cached[0] is table:
            return self._cached[1]
        advice = self._direct(level, table, sighted) or self._explore(table, bot)
        self._cached = (table, advice)
        return advice

    # -- acting on what is in sight ---------------------------------------------------------------

    def _direct(self, level, table: highlevel.Table, sighted: set[int]) -> Advice | None:
        instr, carrying = level.instrs, level.carrying
        if isinstance(instr, GoToInstr):
            return self._best(table, "go to ", instr.desc.obj_set, "{} is what my goal names; I go to it.")
        if isinstance(instr, PickupInstr):
            if carrying is not None:
                return self._drop(table)
            return self._best(table, "pickup ", instr.desc.obj_set, "{} is what my goal names; I pick it up.")
        if isinstance(instr, OpenInstr):
            return self._open(level, table, instr.desc.obj_set, sighted)
        if isinstance(instr, PutNextInstr):
            return self._put_next(level, table, instr)
        return None

    @staticmethod
    def _best(table: highlevel.Table, verb: str, objs: list, why: str) -> Advice | None:
        """The offered ``verb <label>`` on one of ``objs`` with the fewest primitive steps."""
        options = [(len(table.plans[text]), i, text, s) for i, s in enumerate(table.seen)
                   if any(s.obj is o for o in objs) for text in [table.action_for(verb, s)] if text is not None]
        if not options:
            return None
        _, _, text, s = min(options, key=lambda o: o[:2])
        return Advice(text, why.format(f"The {s.label}"))

    @staticmethod
    def _drop(table: highlevel.Table) -> Advice | None:
        if "drop" in table.plans:
            return Advice("drop", "I am carrying something my goal does not need; I drop it to free my hands.")
        return None

    def _open(self, level, table: highlevel.Table, doors: list, sighted: set[int]) -> Advice | None:
        front = next((s for s in table.seen if s.ahead == 1 and s.right == 0), None)
        if front is not None and any(front.obj is d for d in doors) and "toggle" in table.plans:
            return Advice("toggle", f"The {front.label} that my goal names is right in front of me; I open it.")
        advice = self._best(table, "toggle and go through ", doors, "{} is the door my goal names; I open it.")
        if advice is not None:
            return advice
        # a locked door seen in this episode (now or earlier) needs its key first
        locked = [d for d in doors if d.is_locked and id(d) in sighted]
        if not locked:
            return None
        color, carrying = locked[0].color, level.carrying
        if carrying is not None and not (carrying.type == "key" and carrying.color == color):
            return self._drop(table)
        keys = [s.obj for s in table.seen if s.obj.type == "key" and s.obj.color == color]
        return self._best(table, "pickup ", keys, "{} opens the locked " + color + " door my goal names; I pick it up.")

    def _put_next(self, level, table: highlevel.Table, instr: PutNextInstr) -> Advice | None:
        carrying = level.carrying
        if carrying is None:
            return self._best(table, "pickup ", instr.desc_move.obj_set,
                              "{} is the object my goal asks me to move; I pick it up.")
        if not any(carrying is o for o in instr.desc_move.obj_set):
            return self._drop(table)
        fixed = [s for s in table.seen if any(s.obj is o for o in instr.desc_fixed.obj_set)]
        if not fixed:
            return None
        grid = level.grid
        spots = {(x + dx, y + dy) for s in fixed for x, y in [s.pos] for dx, dy in _NEIGHBOURS
                 if 0 <= x + dx < grid.width and 0 <= y + dy < grid.height and grid.get(x + dx, y + dy) is None}
        found = highlevel.routes(level, spots)
        if not found:
            return None
        route = min(found.values(), key=len)
        target = fixed[0].label
        if not route:
            return Advice("drop", f"The cell in front of me is next to the {target}; I drop what I carry there.")
        return Advice(_PRIMITIVE_TEXT[route[0]], f"I carry the object to a free cell beside the {target}.")

    # -- exploring ----------------------------------------------------------------------------------

    @staticmethod
    def _explore(table: highlevel.Table, bot: Callable[[], int | None]) -> Advice:
        """The bot's primitive, as the agentgym action that does the same."""
        thought = "What my goal needs is not in sight or not reachable yet, so I look around."
        act = bot()
        if act == highlevel.PICKUP:
            front = next((s for s in table.seen if s.ahead == 1 and s.right == 0), None)
            text = table.action_for("pickup ", front) if front is not None else None
            if text is not None:
                return Advice(text, f"I pick up the {front.label} in front of me.")
        text = _PRIMITIVE_TEXT.get(act) if act is not None else None
        if text in table.plans:
            return Advice(text, thought)
        return Advice("turn left", thought)
