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

from minigrid.core.actions import Actions
from minigrid.utils.baby_ai_bot import BabyAIBot

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

    def start(self, spec: LevelSpec, seed: int) -> None:
        """Forget the previous episode; nothing is computed until advice is asked for."""
        self._spec, self._seed = spec, seed
        self._shadow = self._bot = self._suggestion = None
        self._applied = 0

    def action(self, env, history: list[int]) -> int | None:
        """The bot's next minigrid action for ``env`` after ``history``; None if it has no plan."""
        if self._shadow is None:
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

    def _fresh_bot(self) -> None:
        try:
            self._bot = BabyAIBot(self._shadow)
            self._suggestion = self._bot.replan()
        except Exception:
            self._bot, self._suggestion = None, None
