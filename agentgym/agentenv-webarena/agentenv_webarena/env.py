"""The ``webarena`` environment: WebArena's tasks in a real Chromium, on the embedded sites or on the user's.

Each session owns one browser (a fresh context per task). The agent reads WebArena's prompt (``OBSERVATION``: the
accessibility tree, ``URL``, ``OBJECTIVE``, ``PREVIOUS ACTION``) and answers in WebArena's reply format; the episode
ends on ``stop [answer]``, after 30 actions, after three replies in a row without an action, or after the same action
three times in a row (WebArena's ``run.py`` limits), and is then graded by the task's evaluators (reward = score).

By default the tasks are the embedded set (:mod:`agentenv_webarena.tasks`) on the sites this server serves itself
(:mod:`agentenv_webarena.sites`), each task on its own copy of their state. ``--option config=PATH --option
sites=shopping=URL,...`` serves WebArena's own task configs (the test split) against the user's self-hosted sites,
with their logins (``storage_state`` files, from ``auth_dir``) and, for tasks that change a site, the user's reset
command. ``--option task_set=miniwob`` serves MiniWoB++'s pages instead (:mod:`agentenv_webarena.miniwob`).
"""

from __future__ import annotations

import os
import random
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentenv import Environment, Split, StepResult, processes
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.server import AppThread
from agentenv_webarena import miniwob
from agentenv_webarena.actions import Action, ActionParsingError, ActionType, describe, read_reply
from agentenv_webarena.browser import Browser, Observation
from agentenv_webarena.evaluators import Grade, Judge, evaluate
from agentenv_webarena.expert import Expert, reply, role_and_name
from agentenv_webarena.tasks import PLACEHOLDERS, Task, embedded_tasks, fill, parse_sites, read_configs

PARSING_FAILURES = 3  # WebArena's run.py: stop after this many replies in a row without an action
REPEATS = 3  # ... or the same action this many times in a row
#: how the embedded sites' addresses read in the prompt (WebArena maps its sites' local addresses to real-looking
#: ones the same way): the ports change from server to server, the prompt should not
SHOWN = {"shopping": "http://market.webarena.local", "reddit": "http://forum.webarena.local",
         "miniwob": "http://miniwob.webarena.local"}

INSTRUCTION = (
    "You are an autonomous agent using a web browser to accomplish a task. Each turn you see the current page as its "
    "accessibility tree, where every element has an id in brackets ([12] link 'My Orders'), the page's URL, the "
    "objective, and your previous action. Act with one of these actions:\n"
    "click [id]; type [id] [text] [1 to press Enter after typing, 0 not to]; hover [id]; press [key+combination]; "
    "scroll [up] or scroll [down]; new_tab; tab_focus [tab index]; close_tab; goto [url]; go_back; go_forward; "
    "stop [answer] when the objective is reached (give the answer when it asks a question, otherwise leave it "
    "empty; answer N/A if the task cannot be done).\n"
    "Think briefly, then end your reply with: In summary, the next action I will perform is ```action```")


def prompt(page: str, url: str, objective: str, previous: str) -> str:
    """WebArena's prompt of one turn (its ``p_cot_id_actree_2s`` template's layout)."""
    return f"OBSERVATION:\n{page}\nURL: {url}\nOBJECTIVE: {objective}\nPREVIOUS ACTION: {previous}"


class WebArenaOptions(BaseModel):
    """Server options (``agentenv serve webarena --option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the task set when no ``config`` is given: "embedded" (the shop and forum this server hosts, 252 test and
    #: 1,230 train tasks) or "miniwob" (MiniWoB++'s 130 pages from the ``miniwob`` package, 2 seeds each to test
    #: and 10 to train; :mod:`agentenv_webarena.miniwob`)
    task_set: Literal["embedded", "miniwob"] = "embedded"
    #: WebArena task configs (a JSON list like ``test.raw.json``, or a directory of ``N.json``): served as the test
    #: split, on the sites given by ``sites``; unset: the embedded task set on the embedded sites
    config: str | None = None
    #: the user's sites, ``shopping=http://host:7770,reddit=http://host:9999,...`` (WebArena's names)
    sites: str = ""
    #: where the configs' ``storage_state`` files (WebArena's ``.auth/``) are looked up; default: the config's folder
    auth_dir: str | None = None
    #: a shell command run before each task whose config has ``require_reset`` (e.g. restoring a site's container)
    reset_command: str | None = None
    #: an OpenAI-compatible endpoint (``http://host/v1``) and model that grade ``fuzzy_match`` answers; without one
    #: those tasks are ungradable (score 0, ``info.ungradable`` says why)
    judge_url: str | None = None
    judge_model: str = ""
    #: the environment variable holding the judge's API key
    judge_key_env: str = "OPENAI_API_KEY"
    #: seconds to wait after each action before reading the page (WebArena: 2.0 on its Docker sites)
    settle: float = Field(default=0.2, ge=0.0, le=10.0)
    #: seconds Playwright waits for a page (a navigation, a load) before the action fails with its error; a step
    #: that hangs longer still (``step_timeout``) loses its session and its browser
    page_timeout: float = Field(default=20.0, gt=0.0, le=600.0)
    #: element ids: "stable" (a node's position in the page's accessibility tree: the same page shows the same ids
    #: at every load, so a task's dataset prompt names the elements its reset shows) or "chrome" (Chrome's own node
    #: ids, as WebArena prints them: another number at each load of a page)
    element_ids: Literal["stable", "chrome"] = "stable"
    #: Chromium to drive (default: ``$AGENTENV_CHROMIUM``, else Debian's ``chromium``)
    chromium: str | None = None
    #: save what the browser shows after the reset and every action as DIR/SPLIT-TASK/TURN.png
    #: (``agentenv play webarena --screenshots DIR`` sets it)
    screenshots: str | None = None


#: options that change how the browser runs or is watched, not the tasks (the fingerprint leaves them out)
RUNTIME_OPTIONS = ("settle", "chromium", "screenshots", "page_timeout")


@dataclass
class Shared:
    tasks: dict[str, list[Task]]
    urls: dict[str, str]  # site -> base URL
    sites: Any = None  # the embedded sites (None on the user's)
    judge: Judge | None = None
    helpers: dict[str, str] = field(default_factory=dict)  # what WebArena's helper functions resolve to here
    start_pages: dict[str, Observation] = field(default_factory=dict)  # an embedded start URL -> its first page
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: how to stop what this server hosts (the sites, MiniWoB's pages), at release
    served: list[Callable[[], None]] = field(default_factory=list)

    @property
    def hosted(self) -> bool:
        """The sites are this server's own (their addresses read as :data:`SHOWN` in the prompt)."""
        return bool(self.served)


class WebArenaEnv(Environment):
    """WebArena's interface, exactly (module docstring); reward and score 1 when the task's evaluators pass."""

    name = "webarena"
    Options = WebArenaOptions
    max_turns = 30
    step_timeout = 90.0  # Playwright gives up on a page after 20 s; a step that still hangs loses its session
    max_sessions = 8  # one Chromium each
    server_memory_mb = 4096
    action_hint = "click [id], type [id] [text] [0|1], scroll [down], goto [url], go_back, stop [answer], ..."
    instruction = INSTRUCTION
    #: AgentGym's WebArena server: /create answers {"env_idx": n}; /reset takes the config's index as "idx" and answers
    #: the page's text, the sites and the objective; /step answers "terminated"/"truncated"; /observation the prompt.
    #: Index N is test task N (WebArena's config N with --option config=test.raw.json)
    agentgym = AgentGymRoutes(
        handle="env_idx", reset_key="idx", reset_extra={"seed": 0}, create_returns="object",
        reset_method="agentgym_reset", step_done="terminated", close_returns={"closed": "closed"},
        index_order=("test", "train"), item_prefix="webarena", upstream_splits={"train": (0, 812), "test": (0, 812)},
        hello="ok")

    def __init__(self) -> None:
        self._browser: Browser | None = None
        self._token: str | None = None
        self._task: Task | None = None
        self._config: dict[str, Any] = {}
        self._expert: Expert | None = None
        self._obs: Observation | None = None
        self._text = ""
        self._previous = "None"
        self._actions: list[Action | None] = []
        self._done = False
        self._shots: Path | None = None

    # -- tasks -------------------------------------------------------------------------------------------------------
    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in cls.splits:
            raise ValueError(f"unknown split {split!r}")
        return len(embedded_tasks()[split])

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        if shared is None:
            return super().task_counts()
        return {split: len(shared.tasks.get(split, [])) for split in cls.splits}

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel, extra: Any = None) -> str:
        # how the browser is run and watched does not change the tasks: those options count at their defaults
        fields = WebArenaOptions.model_fields
        kept = options.model_copy(update={k: fields[k].default for k in RUNTIME_OPTIONS})
        return super().fingerprint(counts, kept, extra)

    @classmethod
    def load_shared(cls, options: WebArenaOptions) -> Shared:
        judge = None
        if options.judge_url:
            judge = Judge(options.judge_url, options.judge_model, os.environ.get(options.judge_key_env, ""))
        if options.config:
            urls = parse_sites(options.sites)
            return Shared({"test": read_configs(options.config), "train": []}, urls, judge=judge)
        if options.sites:
            raise ValueError("sites= needs config= (WebArena's task configs for those sites)")
        if options.task_set == "miniwob":
            folder = miniwob.html_dir()
            pages = AppThread(miniwob.app(folder), lifespan="off")
            tasks = {split: [Task(c) for c in configs] for split, configs in miniwob.tasks(folder).items()}
            return Shared(tasks, {"miniwob": pages.url}, judge=judge, served=[pages.stop])
        from agentenv_webarena.sites.serve import Sites  # starts two servers: only the embedded default needs them

        sites = Sites()
        urls = sites.urls
        return Shared(embedded_tasks(sites.world), urls, sites, judge,
                      {"shopping_orders": urls["shopping"] + "/orders/latest"}, served=[sites.close])

    @classmethod
    def release_shared(cls, shared: Shared) -> None:
        for stop in shared.served if shared is not None else []:
            stop()

    # -- an episode ----------------------------------------------------------------------------------------------------
    def reset(self, task_id: int, split: Split = "test", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        shared: Shared = self.shared
        tasks = shared.tasks.get(split)
        if tasks is None:
            raise ValueError(f"unknown split {split!r}")
        if not 0 <= task_id < len(tasks):
            raise IndexError(f"task {task_id} out of range for split {split!r} ({len(tasks)} tasks)")
        self._task = tasks[task_id]
        self._config = fill(self._task.config, shared.urls)
        if any(p in self._config["start_url"] for p in PLACEHOLDERS):
            raise ValueError(f"task {task_id} starts on a site with no address: give --option sites=... "
                             f"({self._config['start_url']})")
        self._expert = Expert(tuple(fill(list(self._task.plan), shared.urls))) if self._task.plan else None
        storage = self._storage_state(shared)
        if self._config.get("require_reset") and self.options.reset_command:
            subprocess.run(self.options.reset_command, shell=True, check=True, timeout=600)
        browser = self._require_browser()
        self._obs = browser.open(self._config["start_url"], storage, self._config.get("geolocation"))
        if self._is_miniwob():  # the page draws its problem for the task's seed, and states it
            self._config["intent"] = miniwob.start(browser, self._config["instantiation_dict"]["seed"])
            self._obs = browser.observe()
        self._previous, self._actions, self._done = "None", [], False
        self._text = self._prompt()
        self._shots = Path(self.options.screenshots) / f"{split}-{task_id}" if self.options.screenshots else None
        self._screenshot()
        info = {"task_id": task_id, "split": split, "sites": self._config.get("sites", []),
                "intent": self._config["intent"], "url": self._shown(self._obs.url),
                "intent_template_id": self._config.get("intent_template_id")}
        return self._text, info

    def initial_observation(self, task_id: int, split: Split) -> str | None:
        """On the embedded sites a task starts on one of two pages, the same for every task (a fresh copy of the
        sites' state): each is read once per server; datasets of 1,000 tasks then need two page loads, not 1,000.
        (With Chrome's own ids a reset would show the page under other ids: then a reset states it.)"""
        shared: Shared = self.shared
        if shared.sites is None or self.options.element_ids != "stable":
            return None
        config = fill(shared.tasks[split][task_id].config, shared.urls)
        with shared.lock:
            page = shared.start_pages.get(config["start_url"])
            if page is None:
                token = shared.sites.instances.create()
                try:
                    with self._new_browser() as browser:
                        page = browser.open(config["start_url"], shared.sites.instances.storage_state(token))
                finally:
                    shared.sites.instances.drop(token)
                shared.start_pages[config["start_url"]] = page
        return self._shown(prompt(page.text, page.url, config["intent"], "None"))

    def agentgym_reset(self) -> dict[str, Any]:
        """What AgentGym's WebArena server answers a reset with: the page's text (without the prompt around it), the
        task's sites and its objective."""
        if self._obs is None:
            raise RuntimeError("reset() first")
        return {"observation": self._shown(self._obs.text), "sites": self._config.get("sites", []),
                "object": self._config["intent"]}

    def _storage_state(self, shared: Shared) -> str | dict | None:
        if shared.sites is not None:  # a fresh copy of the embedded sites' state, named by a cookie
            shared.sites.instances.drop(self._token)
            self._token = shared.sites.instances.create()
            return shared.sites.instances.storage_state(self._token)
        stored = self._config.get("storage_state")
        if not stored or not self._config.get("require_login", True):
            return None
        if self.options.auth_dir:
            base = Path(self.options.auth_dir).expanduser()
        else:
            config = Path(self.options.config).expanduser()
            base = config if config.is_dir() else config.parent
        path = (base / stored).resolve()
        if not path.is_file():
            raise ValueError(f"the task's login {stored} is not at {path}: run WebArena's auto_login "
                             "(browser_env/auto_login.py) and give its folder as --option auth_dir=...")
        return str(path)

    def _new_browser(self) -> Browser:
        return Browser(self.options.chromium, settle=self.options.settle, timeout=self.options.page_timeout,
                       stable_ids=self.options.element_ids == "stable")

    def _require_browser(self) -> Browser:
        if self._browser is None:
            self._browser = self._new_browser()
            pids, groups = self._browser.owned()
            processes.adopt(self, pids=pids, groups=groups)
        return self._browser

    def _is_miniwob(self) -> bool:
        return self._config.get("eval", {}).get("eval_types") == ["miniwob"]

    def _shown(self, text: str) -> str:
        """The hosted sites' addresses in ``text`` as the prompt shows them (:data:`SHOWN`)."""
        if not self.shared.hosted:
            return text
        for site, base in self.shared.urls.items():
            text = text.replace(base, SHOWN[site])
        return text

    def _local(self, url: str) -> str:
        if not self.shared.hosted:
            return url
        for site, shown in SHOWN.items():
            if url.startswith(shown):
                return self.shared.urls[site] + url[len(shown):]
        return url

    def _prompt(self) -> str:
        assert self._obs is not None
        return self._shown(prompt(self._obs.text, self._obs.url, self._config["intent"], self._previous))

    def step(self, action: str) -> StepResult:
        result = self._step(action)
        self._text = result.observation
        self._screenshot()
        return result

    def _screenshot(self) -> None:
        if self._shots is not None and self._browser is not None:
            self._shots.mkdir(parents=True, exist_ok=True)
            self._browser.screenshot(self._shots / f"{len(self._actions):02d}.png")

    def _step(self, action: str) -> StepResult:
        if self._task is None or self._obs is None:
            raise RuntimeError("reset() first")
        if self._done:
            return StepResult("The task is over.", valid=False, done=True)
        try:
            parsed = read_reply(action)
        except ActionParsingError as e:
            self._actions.append(None)
            self._previous = f"None (no action was read: {e})"[:500]
            if self._actions[-PARSING_FAILURES:] == [None] * PARSING_FAILURES:
                return self._finish("", valid=False, why=f"{PARSING_FAILURES} replies in a row held no action")
            return self._at_limit("", valid=False) or StepResult(self._prompt(), valid=False)
        self._actions.append(parsed)
        if parsed.kind == ActionType.STOP:
            return self._finish(parsed.answer)
        if parsed.kind == ActionType.GOTO_URL:
            parsed = Action(ActionType.GOTO_URL, url=self._local(parsed.url))
        lines = {node_id: node.text for node_id, node in self._obs.nodes.items()}
        self._previous = describe(parsed, lines)
        assert self._browser is not None
        self._obs = self._browser.act(parsed)
        if self._obs.fail_error:
            self._previous += f" (it failed: {self._obs.fail_error.splitlines()[0][:200]})"
        if self._is_miniwob() and miniwob.outcome(self._browser)[0]:  # the page has ended the episode
            return self._finish("")
        last = self._actions[-REPEATS:]
        if (len(last) == REPEATS and parsed.kind != ActionType.TYPE
                and all(a is not None and a == self._actions[-1] for a in last)):
            return self._finish("", why=f"the same action {REPEATS} times in a row")
        return self._at_limit("") or StepResult(self._prompt(), info={"url": self._shown(self._obs.url)})

    def _at_limit(self, answer: str, valid: bool = True) -> StepResult | None:
        if len(self._actions) >= self.max_turns:
            return self._finish(answer, valid=valid, why=f"{self.max_turns} actions")
        return None

    def _finish(self, answer: str, valid: bool = True, why: str = "") -> StepResult:
        """Grade the task where the browser is now (WebArena grades an early stop as ``stop []``)."""
        self._done = True
        assert self._browser is not None
        try:
            if self._is_miniwob():  # the page's own reward (-1 .. 1; 0 while it has not ended)
                raw = miniwob.outcome(self._browser)[1]
                grade = Grade(raw, parts={"miniwob": raw})
            else:
                grade = evaluate(self._config, answer, self._browser, self.shared.judge, self.shared.helpers)
        except Exception as e:  # a site that fails while being read: the task is not passed
            grade = Grade(0.0, f"grading failed: {type(e).__name__}: {e}")
        ended = f" (ended: {why})" if why else ""
        verdict = "ungradable: " + grade.ungradable if grade.ungradable else f"score {grade.score:g}"
        text = f"The task is over{ended}. Your answer: {answer!r}. Result: {verdict}."
        info = {"score": grade.score, "evaluators": grade.parts, "answer": answer}
        if grade.ungradable:
            info["ungradable"] = grade.ungradable
        if why:
            info["ended"] = why
        # the reward is the score, but MiniWoB's failures (-1): no reward
        return StepResult(text, reward=max(0.0, grade.score), done=True,
                          success=grade.score >= 1.0 and not grade.ungradable, score=grade.score, valid=valid,
                          info=info)

    def observation(self) -> str:
        return self._text

    # -- policies ---------------------------------------------------------------------------------------------------
    def expert_action(self) -> str:
        if self._expert is None:
            raise NotImplementedError("WebArena's own tasks have no expert here (their plans are not public)")
        return reply(self._expert.next(self._obs.nodes if self._obs else {})[1])

    def expert_thought(self) -> str | None:
        if self._expert is None or self._obs is None:
            return None
        return self._expert.peek(self._obs.nodes)[0]

    def random_action(self, rng: random.Random) -> str:
        """A uniformly random kind of action, on a random element of the page where it needs one."""
        nodes = self._obs.nodes if self._obs else {}
        kinds = {"link": [], "button": [], "textbox": []}
        for node_id, node in nodes.items():
            found = role_and_name(node.text)
            if found and found[0] in kinds:
                kinds[found[0]].append(node_id)
        clickable = kinds["link"] + kinds["button"]
        choice = rng.choice(["click", "click", "type", "scroll", "go_back", "stop"])
        if choice == "click" and clickable:
            return reply(f"click [{rng.choice(clickable)}]")
        if choice == "type" and kinds["textbox"]:
            word = rng.choice(["red", "mug", "books", "hello", "1", "order"])
            return reply(f"type [{rng.choice(kinds['textbox'])}] [{word}] [{rng.randint(0, 1)}]")
        if choice == "go_back":
            return reply("go_back")
        if choice == "stop":
            return reply(f"stop [{rng.choice(['', '1', 'N/A'])}]")
        return reply(f"scroll [{rng.choice(['down', 'up'])}]")

    def close(self) -> None:
        if self.shared is not None and self.shared.sites is not None:
            self.shared.sites.instances.drop(self._token)
        if self._browser is not None:
            self._browser.close()
            processes.disown(self)
            self._browser = None
