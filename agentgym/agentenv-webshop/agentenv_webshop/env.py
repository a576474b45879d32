"""The ``webshop`` environment: WebShop (Yao et al. 2022) as an agentenv text environment.

An agent shops for a product described by an instruction, with ``search[keywords]`` on the search
page and ``click[value]`` on what pages show (results, options, Buy Now). The catalogue, its goals
and its BM25 index are built once per server (``load_shared``) and shared read-only by all
sessions; a session holds only its :class:`~agentenv_webshop.browser.Browser` (a few strings).
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentenv import Environment, Split, StepResult
from agentenv.env import file_stamps
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_webshop import generate, render, upstream
from agentenv_webshop.browser import DONE, SEARCH, Browser
from agentenv_webshop.catalogue import NO_PRICE_BOUND, Catalogue, Goal
from agentenv_webshop.expert import Plan, plan
from agentenv_webshop.text import STOPWORDS, tokenize

_ACTION = re.compile(r"^\s*(search|click)\s*\[(.*)\]\s*$", re.IGNORECASE | re.DOTALL)

INSTRUCTION = (
    "You are shopping for a customer on WebShop, an online store. The instruction on the page describes the "
    "product to buy: what kind of product it is, the attributes it must have, the options to select (such as "
    "color or size) and a price limit. Each page is shown as text: its elements (titles, prices, buttons, "
    "option values) one after another, separated by [SEP] or by line breaks. "
    "Take one action per turn:\n"
    "- search[keywords]: search the store. Only the search page has a search box (the first page, or after "
    "click[Back to Search]).\n"
    "- click[value]: click something the page shows: a product id in the search results, Next > or < Prev to "
    "move between result pages or go back, an option value on a product page to select it, Description, "
    "Features or Reviews to read more, Back to Search, or Buy Now to buy the product with the options selected.\n"
    "The episode ends when you click Buy Now. The score is 1 when the product is of the requested kind, has "
    "every requested attribute, the requested options are selected and the price is under the limit; a partial "
    "match earns partial credit."
)


class WebShopOptions(BaseModel):
    """Server options (``agentenv serve webshop --option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: a directory with WebShop's published JSON files (see ``upstream``); None: the generated catalogue
    data_path: str | None = None
    #: products to use: the generated catalogue's size (default 6000), or the first N of the upstream file
    num_products: int | None = Field(default=None, ge=10)
    #: upstream data only: the human-written goals (items_human_ins.json) or the synthetic ones; None: human if present
    human_goals: bool | None = None
    #: "text" (elements joined by [SEP], as AgentGym serves) or "text_rich" ([button] markers, one per line)
    observation_mode: Literal["text", "text_rich"] = "text"


@lru_cache(maxsize=2)
def _catalogue(options: WebShopOptions) -> Catalogue:
    """One catalogue per distinct options in a process: a server builds it once, and tests or a
    scratch instance asking again get the same object."""
    if options.data_path:
        return upstream.load(options.data_path, options.num_products, options.human_goals)
    return generate.generate(options.num_products or generate.NUM_PRODUCTS)


class WebShopEnv(Environment):
    """Buy the product an instruction describes; reward as the WebShop paper on *Buy Now*.

    Reward (``agentenv_webshop.reward``): ``r_type * (attributes met + options met + price ok) /
    (attributes + options + 1)``, paid once, on the step that buys; ``score`` is the same number and
    ``success`` means 1.0. Episodes that never buy earn 0. ``seed`` is ignored: a task id fixes the goal.
    """

    name: ClassVar[str] = "webshop"
    version: ClassVar[str] = "1"
    max_turns: ClassVar[int] = 15
    #: AgentGym's WebShop server: handles are "env_idx" (a bare int from /create), "session_id" picks the
    #: goal, /reset answers [observation, null] and a step's observation is "state". Upstream has one index space
    #: of 6,910 synthetic goals (AgentEval's and AgentTraj's items are among them); ``--compat agentgym`` serves
    #: the agentgym profile (index N: its goal N), and with ``--option profile=native`` this project's test goals
    #: first, then its train goals
    agentgym: ClassVar[AgentGymRoutes] = AgentGymRoutes(
        handle="env_idx", reset_key="session_id", reset_returns="pair", step_observation="state",
        index_order=("test", "train"), upstream_splits={"test": (0, 6910), "train": (0, 6910)}, has_close=False,
        hello="ok", options={"profile": "agentgym"})
    #: ``--option profile=agentgym``: AgentGym's goals on WebShop's 1,000 products, from the user's data files
    profiles = MappingProxyType({"agentgym": "agentenv_webshop.agentgym_profile:AgentGymWebShopEnv"})
    success_threshold: ClassVar[float] = 1.0
    action_format: ClassVar[str] = "text"
    action_hint: ClassVar[str] = "search[keywords] or click[value], e.g. search[long sleeve t-shirt] or click[buy now]"
    instruction: ClassVar[str] = INSTRUCTION
    Options: ClassVar[type[BaseModel]] = WebShopOptions

    def __init__(self) -> None:
        self._browser: Browser | None = None
        self._obs = ""
        self._plan: tuple[int, Plan] | None = None  # the expert's plan for the state numbered below
        self._state = 0  # bumped on every reset and step, so a plan is computed once per state

    # -- tasks and shared data ----------------------------------------------------------------------
    @classmethod
    def num_tasks(cls, split: Split) -> int:
        """Task counts of the default (generated) catalogue; a server counts its own with ``task_counts``."""
        counts = {"train": generate.NUM_PRODUCTS - generate.TEST_GOALS, "test": generate.TEST_GOALS}
        if split not in counts:
            raise ValueError(f"unknown split {split!r}; expected one of {sorted(counts)}")
        return counts[split]

    @classmethod
    def load_shared(cls, options: WebShopOptions) -> Catalogue:
        return _catalogue(options)

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        if shared is None:
            return super().task_counts(shared)
        return shared.counts()

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel) -> str:
        """The default hash, plus the size and modification time of upstream data files."""
        data_path = getattr(options, "data_path", None)
        return super().fingerprint(counts, options, file_stamps(upstream.data_files(data_path)) if data_path else [])

    def _catalogue(self) -> Catalogue:
        if self.shared is None:  # used outside a server (tests, notebooks): build or reuse the default
            self.options = self.options or WebShopOptions()
            self.shared = self.load_shared(self.options)
        return self.shared

    def _mode(self) -> str:
        return self.options.observation_mode if self.options is not None else "text"

    def _goal(self, task_id: int, split: Split) -> Goal:
        goals = self._catalogue().goals
        if split not in goals:
            raise ValueError(f"unknown split {split!r}; expected one of {sorted(goals)}")
        if not 0 <= task_id < len(goals[split]):
            raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{len(goals[split]) - 1})")
        return goals[split][task_id]

    def initial_observation(self, task_id: int, split: Split) -> str:
        return render.render(render.search_page(self._goal(task_id, split).instruction), self._mode())

    # -- an episode ----------------------------------------------------------------------------------
    def reset(self, task_id: int, split: Split = "train", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        goal = self._goal(task_id, split)
        self._browser = Browser(self._catalogue(), goal)
        self._state += 1
        self._obs = render.observation(self._browser, self._mode())
        info = {
            "task_id": task_id, "split": split, "asin": goal.asin, "attributes": list(goal.attributes),
            "options": [list(o) for o in goal.options],
            "price_upper": None if goal.price_upper >= NO_PRICE_BOUND else goal.price_upper,
        }
        return self._obs, info

    def step(self, action: str) -> StepResult:
        b = self._browser
        if b is None:
            return StepResult("Call reset before step.", valid=False)
        if b.page == DONE:
            r = b.outcome.reward if b.outcome else 0.0
            return StepResult("The episode is over: you already bought a product.", valid=False, done=True,
                              success=r >= self.success_threshold, score=r)
        self._state += 1
        match = _ACTION.match(action if isinstance(action, str) else "")
        if match is None:
            return self._invalid(f"Invalid action {str(action).strip()[:80]!r}: write search[keywords] on the "
                                 "search page, or click[value] with a value shown on the page.")
        verb, arg = match.group(1).lower(), match.group(2).strip()
        if verb == "search":
            if b.page != SEARCH:
                return self._invalid("There is no search box on this page; click[Back to Search] first.")
            if not arg:
                return self._invalid("search[] needs keywords, e.g. search[wireless earbuds].")
            b.search(arg)
            return self._show({"results": len(b.results)})
        target = b.resolve(arg)
        if target is None:
            hint = " On the search page, type search[keywords]." if b.page == SEARCH else ""
            return self._invalid(f"{arg[:80]!r} is not clickable on this page.{hint}")
        outcome = b.click(target)
        if outcome is None:
            return self._show({})
        self._obs = render.observation(b, self._mode())
        success = outcome.reward >= self.success_threshold
        info = {"asin": b.asin, "options": dict(b.options), **outcome.as_info()}
        return StepResult(self._obs, reward=outcome.reward, done=True, success=success, score=outcome.reward,
                          info=info)

    def observation(self) -> str:
        return self._obs

    def close(self) -> None:
        self._browser, self._plan = None, None

    # -- policies ------------------------------------------------------------------------------------
    def available_actions(self) -> list[str]:
        """What can be done now: ``search[<query>]`` on the search page, else one ``click[...]`` per
        clickable element (lower case, as upstream lists them)."""
        b = self._browser
        if b is None or b.page == DONE:
            return []
        if b.page == SEARCH:
            return ["search[<query>]"]
        return [f"click[{key}]" for key in b.clickables()]

    def random_action(self, rng: random.Random) -> str:
        """A random clickable; on the search page a search for 1-4 random words of the instruction."""
        b = self._browser
        if b is not None and b.page == SEARCH:
            words = list(dict.fromkeys(w for w in tokenize(b.goal.instruction) if w not in STOPWORDS))
            return f"search[{' '.join(rng.sample(words, min(len(words), rng.randint(1, 4))))}]"
        actions = self.available_actions()
        return rng.choice(actions) if actions else "click[buy now]"

    def _expert(self) -> Plan:
        if self._browser is None:
            return Plan("click[buy now]", "There is no episode.")
        if self._plan is None or self._plan[0] != self._state:
            self._plan = (self._state, plan(self._browser))
        return self._plan[1]

    def expert_action(self) -> str:
        return self._expert().action

    def expert_thought(self) -> str:
        return self._expert().thought

    # -- helpers -------------------------------------------------------------------------------------
    def _show(self, info: dict[str, Any]) -> StepResult:
        assert self._browser is not None
        self._obs = render.observation(self._browser, self._mode())
        return StepResult(self._obs, info={"page": self._browser.page, **info})

    def _invalid(self, message: str) -> StepResult:
        assert self._browser is not None
        self._obs = message + "\n\n" + render.observation(self._browser, self._mode())
        return StepResult(self._obs, valid=False, info={"page": self._browser.page})
