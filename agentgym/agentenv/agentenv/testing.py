"""Helpers for environment authors' tests: :func:`check_environment` (the SDK's contract, checked as
Gymnasium's ``check_env`` checks an environment), a real server on loopback in a thread, episodes in
process."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentenv import profiles
from agentenv.env import Environment, StepResult
from agentenv.errors import NotSupported
from agentenv.server import AppThread, ServerConfig, create_app, parse_options


@contextlib.contextmanager
def serve_in_thread(env_cls: type[Environment], config: ServerConfig | None = None,
                    host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``env_cls`` over real HTTP on a free port for the duration of the block."""
    with serve_app_in_thread(create_app(env_cls, config), host) as url:
        yield url


@contextlib.contextmanager
def serve_app_in_thread(app: Any, host: str = "127.0.0.1", lifespan: str = "auto") -> Iterator[str]:
    """Serve any ASGI app (an environment's, a stand-in model endpoint) on a free loopback port
    (``lifespan="off"``: the app's start-up and shut-down hooks never run)."""
    served = AppThread(app, host, lifespan)
    try:
        yield served.url
    finally:
        served.stop()


@contextlib.contextmanager
def in_process(env_cls: type[Environment], **options: Any) -> Iterator[Environment]:
    """One instance set up as a server sets up a session's (its options parsed, its shared data loaded), closed and
    its shared data released after the block."""
    parsed = parse_options(env_cls, options)
    env = env_cls()
    env.options, env.shared = parsed, env_cls.load_shared(parsed)
    try:
        yield env
    finally:
        try:
            env.close()
        finally:
            env_cls.release_shared(env.shared)


def play_in_process(env: Environment, task_id: int, split: str, policy: Callable[[Environment], str],
                    max_turns: int | None = None) -> tuple[float, list[StepResult]]:
    """One episode without a server, under the runtime's rules (truncation at ``max_turns``,
    default the class's): the reward sum and every step's result."""
    env.reset(task_id, split)  # type: ignore[arg-type]
    results: list[StepResult] = []
    for _ in range(max_turns or env.max_turns):
        results.append(env.step(policy(env)))
        if results[-1].done:
            break
    return sum(r.reward for r in results), results


def expert_steps(client: Any, env_id: str, max_steps: int = 1000) -> list[Any]:
    """Play the server's expert to the end of a session's episode over HTTP (an
    :class:`agentenv.client.EnvClient`); every expert turn must come with a thought. The steps."""
    steps = []
    for _ in range(max_steps):
        suggestion = client.suggest(env_id, "expert")
        assert suggestion.thought, "the expert gave no thought"
        steps.append(client.step(env_id, suggestion.action))
        if steps[-1].done:
            return steps
    raise AssertionError(f"the expert did not finish within {max_steps} steps")


def tree_rss(pid: int) -> int:
    """Resident memory of a process and every process under it (simulators, JVMs), in bytes."""
    import psutil

    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            total += child.memory_info().rss
    return total


async def create_close_cycles(client: Any, n: int, n_tasks: int, width: int = 16,
                              progress: Callable[[int], None] | None = None) -> None:
    """``n`` sessions through a server (an :class:`agentenv.client.AsyncEnvClient`), ``width`` at a time:
    create on a train task, one step, close. What a per-session leak would show up over."""
    import asyncio

    async def one(k: int) -> None:
        created = await client.create(k % n_tasks, "train")
        actions = await client.available_actions(created.env_id)
        if actions:
            action = actions[k % len(actions)]
        else:  # an open action space: the server's random policy, where it has one
            try:
                action = await client.policy_action(created.env_id, "random")
            except NotSupported:
                action = "look"
        await client.step(created.env_id, action)
        await client.close(created.env_id)

    for start in range(0, n, width):
        batch = range(start, min(n, start + width))
        await asyncio.gather(*(one(k) for k in batch))
        if progress is not None:
            progress(len(batch))


# -- check_environment: the SDK's contract, for any environment class ----------------------------------------------

#: the parts of :func:`check_environment`, in the order it runs them: the class's declarations ("class"),
#: resets ("reset"), the expert on every task ("expert"), the protocol v1 server ("http") and, for an
#: environment that declares them, AgentGym's routes ("agentgym")
CHECKS = ("class", "reset", "expert", "http", "agentgym")

_NAME = re.compile(r"^[a-z][a-z0-9_]{1,31}$")


def checks_for(env_cls: type[Environment]) -> tuple[str, ...]:
    """The parts of :func:`check_environment` that apply to ``env_cls`` ("agentgym" only where the class
    declares AgentGym routes), e.g. to parametrize a test over them."""
    return tuple(c for c in CHECKS if c != "agentgym" or getattr(env_cls, "agentgym", None) is not None)


@dataclass
class ExpertEpisode:
    """The expert's episode on one task, in process: what it did and what each step returned."""

    split: str
    task_id: int
    first_observation: str = ""
    reset_info: dict[str, Any] = field(default_factory=dict)
    actions: list[str] = field(default_factory=list)
    thoughts: list[str | None] = field(default_factory=list)
    results: list[StepResult] = field(default_factory=list)
    #: the available actions before each step (recorded for the served tasks only)
    available: list[list[str]] = field(default_factory=list)
    #: what went wrong (None: the expert solved the task as the contract asks)
    failure: str | None = None

    @property
    def total(self) -> float:
        return sum(r.reward for r in self.results)

    @property
    def turns(self) -> int:
        return len(self.results)

    @property
    def success(self) -> bool:
        return bool(self.results) and self.results[-1].done and bool(self.results[-1].success)


@dataclass
class EnvironmentReport:
    """What :func:`check_environment` checked and saw, for assertions of an environment's own."""

    env_cls: type[Environment]
    options: Any
    task_counts: dict[str, int]
    checked: tuple[str, ...]
    #: the expert's episodes, one per checked task (part "expert")
    episodes: list[ExpertEpisode] = field(default_factory=list)
    #: ``/info`` as the server served it (part "http")
    info: dict[str, Any] | None = None

    def episode(self, split: str, task_id: int) -> ExpertEpisode:
        return next(e for e in self.episodes if (e.split, e.task_id) == (split, task_id))


def check_environment(env_cls: type[Environment], *, options: Mapping[str, Any] | None = None,
                      splits: Sequence[str] | Mapping[str, Iterable[int]] = ("test",), limit: int | None = None,
                      served: Sequence[int] = (0,), checks: Iterable[str] = CHECKS, registered: bool = True,
                      thoughts: bool = False, min_success_rate: float = 1.0,
                      observation_key: Callable[[str], Any] | None = None) -> EnvironmentReport:
    """Check an environment class against the SDK's contract (docs/environments.md), as Gymnasium's
    ``check_env`` checks an environment; a broken promise is an :class:`AssertionError` saying which.

    - "class": the declarations ``/info`` serves are there and sane (name, version, splits with positive
      sizes, ``max_turns``, ``success_threshold``, the action format and its tools or language, session
      limits, options that refuse unknown keys), the class is registered under its name, and declared
      AgentGym routes are consistent;
    - "reset": every split refuses task ids out of range (``IndexError``); a reset is deterministic
      (two instances, a seed, a reset after steps: the same observation and info; ``info`` is JSON),
      ``observation()`` and ``initial_observation`` agree with it, and instances share no state;
    - "expert": the expert solves every checked task within ``max_turns``: each step valid, the episode
      done with ``success`` and a return of at least ``success_threshold`` (with ``thoughts``, a thought
      at every turn); all failing tasks are reported together;
    - "http": the protocol v1 server of the class (``/health``, ``/info`` as declared, ``/tasks``,
      create/reset/step/observation/available_actions/policy_action/close) plays the expert on the
      ``served`` tasks exactly as it plays in process, and answers an ended episode (409), an unknown
      task or split and a closed session with the protocol's errors;
    - "agentgym" (environments with ``agentgym = AgentGymRoutes(...)``): AgentGym's routes, driven as
      AgentGym's clients drive them, play the ``served`` tasks as the environment does in process (first
      observation, every step's observation, reward and done, the return the client reads) and answer an
      ended episode, an unknown handle and an index past every split with AgentGym's errors.

    ``options``: the server options (``KEY: value``) to check the environment with. ``splits``: the
    splits whose tasks the expert plays, every task (at most ``limit`` of each), or a mapping
    ``split -> task ids`` (a sample). ``served``: task ids of the first of those splits played over
    HTTP and AgentGym's routes. ``checks``: which parts to run (:data:`CHECKS`; :func:`checks_for`).
    ``registered``: the class is installed under the entry point group ``agentenv.envs``. ``thoughts``:
    the expert states a thought (``expert_thought``) at every turn, in process and over HTTP.
    ``min_success_rate``: the share of checked tasks the expert must solve. ``observation_key``: for an
    environment whose observations of the same state may differ between instances (a simulator listing
    objects in another order), what of two observations must agree (default: all of it); available
    actions are then not compared between instances.
    """
    checks = tuple(checks)
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown checks {unknown}; choose from {', '.join(CHECKS)}")
    checker = _Checker(env_cls, dict(options or {}), splits, limit, tuple(served), registered, thoughts,
                       min_success_rate, observation_key)
    try:
        report = EnvironmentReport(env_cls, checker.options, checker.counts, checks)
        for part in CHECKS:
            if part in checks:
                getattr(checker, "check_" + part)(report)
        return report
    finally:
        checker.cleanup()


def _short(text: Any, limit: int = 300) -> str:
    text = str(text)
    return repr(text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2:])


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


class _Checker:
    """One run of :func:`check_environment`: the class, its parsed options and shared data, the instances."""

    def __init__(self, env_cls: type[Environment], raw: dict[str, Any],
                 splits: Sequence[str] | Mapping[str, Iterable[int]], limit: int | None, served: tuple[int, ...],
                 registered: bool, thoughts: bool, min_success_rate: float,
                 key: Callable[[str], Any] | None) -> None:
        if not (isinstance(env_cls, type) and issubclass(env_cls, Environment)):
            raise AssertionError(f"{env_cls!r} is not an agentenv.Environment subclass")
        self.cls, self.raw, self.registered, self.thoughts = env_cls, raw, registered, thoughts
        self.name = str(getattr(env_cls, "name", env_cls.__name__))
        self.min_success_rate, self.key = min_success_rate, key
        self._instances: list[Environment] = []
        self._shared: list[Any] = []
        profile_cls, rest = profiles.split_options(env_cls, raw)  # the options may name the class's own profile
        assert profile_cls is env_cls, f"{self.name}: the options name the profile of {profile_cls.__name__}"
        self.options = parse_options(env_cls, rest)
        self.shared = self._load(self.options)
        self.counts = {str(k): v for k, v in env_cls.task_counts(self.shared).items()}
        if isinstance(splits, Mapping):
            self.tasks = {s: list(ids) for s, ids in splits.items()}
        else:
            self.tasks = {s: list(range(min(self.counts.get(s, 0), limit if limit is not None else 10**12)))
                          for s in splits}
        for split, ids in self.tasks.items():
            assert split in self.counts, f"{self.name}: no split {split!r} to check (it has {list(self.counts)})"
            bad = [t for t in ids if not 0 <= t < self.counts[split]]
            assert not bad, f"{self.name}: task ids {bad} are out of range for split {split!r}"
        self.served_split = next(iter(self.tasks), "test")
        self.served = served

    # -- instances, as the runtime builds them --------------------------------------------------------------
    def _load(self, options: Any) -> Any:
        shared = self.cls.load_shared(options)
        self._shared.append(shared)
        return shared

    def new(self, options: Any = None, shared: Any = None) -> Environment:
        env = self.cls()
        env.shared, env.options = (self.shared, self.options) if options is None else (shared, options)
        self._instances.append(env)
        return env

    def cleanup(self) -> None:
        from agentenv import processes

        for env in self._instances:
            with contextlib.suppress(Exception):
                env.close()
            processes.kill_children(env)
        self._instances.clear()
        for shared in self._shared:
            with contextlib.suppress(Exception):
                self.cls.release_shared(shared)
        self._shared.clear()

    def same(self, a: str, b: str) -> bool:
        return a == b if self.key is None else self.key(a) == self.key(b)

    # -- the expert ----------------------------------------------------------------------------------------
    def play_expert(self, env: Environment, split: str, task_id: int, record: bool = False) -> ExpertEpisode:
        """The expert's episode under the runtime's rules (at most ``max_turns`` steps), its thought asked
        before each action as the server asks it; the first broken promise is the episode's failure."""
        ep = ExpertEpisode(split, task_id)
        try:
            ep.first_observation, ep.reset_info = env.reset(task_id, split)
            for turn in range(1, self.cls.max_turns + 1):
                if record:
                    ep.available.append(list(env.available_actions()))
                thought = env.expert_thought()
                action = env.expert_action()
                ep.thoughts.append(thought)
                ep.actions.append(action)
                if ep.failure is not None:
                    pass
                elif thought is not None and not (isinstance(thought, str) and thought.strip()):
                    ep.failure = f"turn {turn}: expert_thought() gave {thought!r} (a text or None)"
                elif self.thoughts and not thought:
                    ep.failure = f"turn {turn}: the expert gave no thought for {_short(action)}"
                if not isinstance(action, str) or not action:
                    ep.failure = f"turn {turn}: expert_action() gave {action!r}, not an action"
                    return ep
                result = env.step(action)
                if not isinstance(result, StepResult):
                    ep.failure = f"turn {turn}: step() returned {type(result).__name__}, not a StepResult"
                    return ep
                ep.results.append(result)
                if not (isinstance(result.observation, str) and math.isfinite(float(result.reward))):
                    ep.failure = ep.failure or f"turn {turn}: a non-text observation or a non-finite reward"
                if not result.valid and ep.failure is None:
                    ep.failure = (f"turn {turn}: the expert's action {_short(action)} was invalid: "
                                  f"{_short(result.observation)}")
                if result.done:
                    break
        except Exception as e:  # the environment's own error, reported with the task it happened on
            ep.failure = f"raised {type(e).__name__}: {e}"
            return ep
        if ep.failure is None:
            last = ep.results[-1]
            if not last.done:
                ep.failure = (f"not done within max_turns={self.cls.max_turns} (return {ep.total:g}); last "
                              f"observation: {_short(last.observation)}")
            elif not last.success:
                ep.failure = (f"done without success after {ep.turns} turns (return {ep.total:g}); last "
                              f"observation: {_short(last.observation)}")
            elif ep.total < self.cls.success_threshold - 1e-9:
                ep.failure = (f"success with a return of {ep.total:g}, below success_threshold="
                              f"{self.cls.success_threshold:g}")
        return ep

    def native_episodes(self, report: EnvironmentReport | None, options: Any = None,
                        shared: Any = None) -> dict[int, ExpertEpisode]:
        """The expert's in-process episodes of the served tasks (with the available actions recorded);
        each must be a solved one."""
        env = self.new(options, shared)
        out = {}
        for task_id in self.served:
            ep = self.play_expert(env, self.served_split, task_id, record=self.key is None)
            assert ep.failure is None, f"{self.name}: the expert on {self.served_split}/{task_id}: {ep.failure}"
            out[task_id] = ep
        return out

    # -- the parts -----------------------------------------------------------------------------------------
    def check_class(self, report: EnvironmentReport) -> None:
        from pydantic import BaseModel

        from agentenv.actions import ACTION_FORMATS

        cls, name = self.cls, self.name
        assert isinstance(getattr(cls, "name", None), str) and _NAME.match(cls.name), \
            f"{cls.__name__}.name must be a lower-case name (letters, digits, _; 2-32 characters), not {cls.name!r}"
        if self.registered:
            from agentenv import registry

            try:
                loaded = profiles.resolve(registry.load(name), cls.profile)
            except (KeyError, TypeError, ValueError) as e:
                raise AssertionError(f"{name}: not registered (entry point group agentenv.envs, its profiles): "
                                     f"{e}") from None
            assert loaded is cls, f"{name}: the registry loads {loaded!r} for profile {cls.profile!r}, not {cls!r}"
        for profile in cls.profiles:  # each listed profile loads, names this environment and says which it is
            try:
                profiles.resolve(cls, profile)
            except (ImportError, AttributeError, TypeError) as e:
                raise AssertionError(f"{name}: profile {profile!r}: {e}") from None
        assert isinstance(cls.version, str) and cls.version, f"{name}: version must be a non-empty string"
        splits = tuple(cls.splits)
        assert {"train", "test"} <= set(splits) and len(set(splits)) == len(splits), \
            f"{name}: splits must name train and test, each once: {splits}"
        assert type(cls.max_turns) is int and cls.max_turns >= 1, f"{name}: max_turns must be a positive int"
        threshold = cls.success_threshold
        assert isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and \
            math.isfinite(threshold) and threshold > 0, f"{name}: success_threshold must be a positive number"
        described = cls.describe()
        fmt = described["action_format"]
        assert fmt in ACTION_FORMATS, f"{name}: action format {fmt!r} is none of {ACTION_FORMATS}"
        assert isinstance(described["instruction"], str) and isinstance(described["action_hint"], str), \
            f"{name}: instruction and action_hint must be text"
        if fmt == "code":
            assert described["code_language"], f"{name}: a code action format needs code_language"
        if fmt == "tool":
            tools = described["tools"]
            names = [t["name"] for t in tools]
            assert "finish" in names, f"{name}: a tool environment needs a finish tool (it has {names})"
            assert len(set(names)) == len(names), f"{name}: tool names repeat: {names}"
            for t in tools:
                assert t["parameters"].get("type") == "object", f"{name}: tool {t['name']}'s parameters: not an object"
                assert f"- {t['name']}(" in described["instruction"], \
                    f"{name}: the instruction does not list the tool {t['name']}"
        else:
            assert not described["tools"], f"{name}: tools declared for the {fmt!r} action format"
        assert cls.max_sessions is None or (type(cls.max_sessions) is int and cls.max_sessions >= 1), \
            f"{name}: max_sessions must be None or a positive int"
        assert cls.step_timeout is None or (isinstance(cls.step_timeout, (int, float)) and cls.step_timeout > 0), \
            f"{name}: step_timeout must be None or positive seconds"
        assert isinstance(cls.server_cpus, (int, float)) and cls.server_cpus > 0, f"{name}: server_cpus must be > 0"
        assert cls.server_memory_mb is None or (type(cls.server_memory_mb) is int and cls.server_memory_mb > 0), \
            f"{name}: server_memory_mb must be None or a positive int"
        assert isinstance(cls.Options, type) and issubclass(cls.Options, BaseModel), \
            f"{name}: Options must be a pydantic model"
        try:
            parse_options(cls, {"no_such_option_of_check_environment": "1"})
        except ValueError:
            pass
        else:
            raise AssertionError(f"{name}: an unknown option is accepted (Options needs extra='forbid')")
        counts = self.counts
        assert set(counts) == set(splits), f"{name}: task_counts() gives {sorted(counts)}, splits are {splits}"
        for split, n in counts.items():
            assert type(n) is int and n > 0, f"{name}: split {split!r} has {n!r} tasks (a positive int is needed)"
        try:
            got = cls.num_tasks("no-such-split")
        except (ValueError, LookupError):
            pass
        else:
            raise AssertionError(f"{name}: num_tasks('no-such-split') gave {got!r} instead of an error")
        fingerprint = cls.fingerprint(counts, self.options)
        assert isinstance(fingerprint, str) and fingerprint == cls.fingerprint(dict(counts), self.options), \
            f"{name}: fingerprint() must be a stable string"
        routes = getattr(cls, "agentgym", None)
        if routes is not None:
            from agentenv.interop.agentgym_routes import AgentGymRoutes

            assert isinstance(routes, AgentGymRoutes), f"{name}: agentgym must be an AgentGymRoutes, not {routes!r}"
            assert routes.index_order and set(routes.index_order) <= set(splits), \
                f"{name}: AgentGym's index_order {routes.index_order} names splits the environment lacks"
            for path, method in routes.extras.items():
                assert path.startswith("/") and callable(getattr(cls, method, None)), \
                    f"{name}: AgentGym extra route {path} names no method {method!r}"
            served, rest = profiles.split_options(cls, {**routes.options, **self.raw})
            parse_options(served, rest)

    def require_tasks(self) -> None:
        for split, ids in self.tasks.items():
            assert ids, f"{self.name}: no task of split {split!r} to check ({self.counts[split]} in the split)"

    def check_reset(self, report: EnvironmentReport) -> None:
        name = self.name
        self.require_tasks()
        probe = self.new()
        for split, n in self.counts.items():
            for bad in (n, -1):
                try:
                    probe.reset(bad, split)
                except IndexError:
                    continue
                except Exception as e:
                    raise AssertionError(f"{name}: reset({bad}, {split!r}) raised {type(e).__name__}: {e}, "
                                         "not IndexError") from None
                raise AssertionError(f"{name}: reset({bad}, {split!r}) of a task out of range did not raise "
                                     "IndexError")
        samples = {(s, t) for s, ids in self.tasks.items() for t in ids[:1] + ids[-1:]}
        samples |= {(self.served_split, t) for t in self.served}
        a, b = self.new(), self.new()
        for split, task_id in sorted(samples):
            where = f"{name} {split}/{task_id}"
            initial = self.new().initial_observation(task_id, split)
            obs, info = a.reset(task_id, split)
            assert isinstance(obs, str) and obs, f"{where}: reset gave an empty or non-text observation"
            assert isinstance(info, dict), f"{where}: reset's info must be a dict"
            try:
                json.dumps(info)
            except (TypeError, ValueError) as e:
                raise AssertionError(f"{where}: reset's info is not JSON ({e})") from None
            assert a.observation() == obs, f"{where}: observation() after reset is not what reset returned"
            assert initial is None or self.same(initial, obs), \
                f"{where}: initial_observation() {_short(initial)} differs from reset's {_short(obs)}"
            again, again_info = b.reset(task_id, split)
            assert self.same(again, obs) and again_info == info, \
                f"{where}: two resets of the task differ: {_short(obs)} / {_short(again)}"
            seeded, _ = b.reset(task_id, split, seed=7)
            seeded_again, _ = b.reset(task_id, split, seed=7)
            assert self.same(seeded, seeded_again), f"{where}: two resets with seed 7 differ"
            with contextlib.suppress(NotImplementedError):  # a reset after steps starts afresh
                a.step(a.expert_action())
                replay, replay_info = a.reset(task_id, split)
                assert self.same(replay, obs) and replay_info == info, \
                    f"{where}: a reset after a step differs from the first: {_short(replay)}"
        # instances share no state: one's step leaves the other's observation as it was
        split, ids = next(iter(self.tasks.items()))
        first, last = ids[0], ids[-1]
        a.reset(first, split)
        other, _ = b.reset(last, split)
        with contextlib.suppress(NotImplementedError):
            result = a.step(a.expert_action())
            assert a.observation() == result.observation, \
                f"{name}: observation() after a step is not what step returned"
            assert b.observation() == other, f"{name}: a step of one instance changed another's observation"

    def check_expert(self, report: EnvironmentReport) -> None:
        self.require_tasks()
        env = self.new()
        episodes = [self.play_expert(env, split, task_id) for split, ids in self.tasks.items() for task_id in ids]
        report.episodes = episodes
        failed = [e for e in episodes if e.failure is not None]
        solved = len(episodes) - len(failed)
        if solved / len(episodes) >= self.min_success_rate - 1e-12 and (self.min_success_rate < 1 or not failed):
            return
        lines = [f"  {e.split}/{e.task_id}: {e.failure}" for e in failed]
        need = "every task" if self.min_success_rate >= 1 else f"at least {self.min_success_rate:.0%} of them"
        raise AssertionError(f"{self.name}: the expert solved {solved} of {len(episodes)} tasks "
                             f"({', '.join(self.tasks)}), {need} must be:\n" + "\n".join(lines))

    def check_http(self, report: EnvironmentReport) -> None:
        from agentenv.client import EnvClient
        from agentenv.errors import EpisodeDone, NotFound, SessionNotFound, TaskNotFound, ValidationFailed

        name, cls, split = self.name, self.cls, self.served_split
        native = self.native_episodes(report)
        with serve_in_thread(cls, ServerConfig(options=self.raw)) as url, EnvClient(url, retries=0) as client:
            health = client.health()
            assert health["status"] == "ok" and health["env"] == name, f"{name}: /health answered {health}"
            info = report.info = client.info()
            expected = {"env": name, "splits": self.counts, "max_turns": cls.max_turns, **_json(cls.describe()),
                        "success_threshold": float(cls.success_threshold), "step_timeout": cls.step_timeout,
                        "options": self.options.model_dump(mode="json"), "version": cls.version,
                        "fingerprint": cls.fingerprint(self.counts, self.options)}
            for k, v in expected.items():
                assert info.get(k) == v, f"{name}: /info serves {k}={_short(info.get(k))}, the class {_short(v)}"
            if cls.max_sessions:
                assert info["max_sessions"] <= cls.max_sessions, f"{name}: /info's max_sessions exceeds the class's"
            for task_id, ep in native.items():
                where = f"{name} over HTTP, {split}/{task_id}"
                listed = client.tasks(split, task_id, 1)
                assert [t for t, _ in listed] == [task_id], f"{where}: /tasks listed {[t for t, _ in listed]}"
                created = client.create(task_id, split)
                env_id = created.env_id
                assert self.same(created.observation, ep.first_observation), \
                    f"{where}: /create's observation {_short(created.observation)} is not reset's in process"
                assert self.same(listed[0][1], created.observation), f"{where}: /tasks and /create differ"
                assert created.info == _json(ep.reset_info), f"{where}: /create's info differs from reset's"
                assert client.observation(env_id) == created.observation, f"{where}: /observation after /create"
                if self.key is None:
                    assert client.available_actions(env_id) == ep.available[0], f"{where}: /available_actions"
                for i, want in enumerate(ep.results):
                    suggestion = client.suggest(env_id, "expert")
                    assert suggestion.thought or not self.thoughts, f"{where}: turn {i + 1}: the expert gave no thought"
                    if self.key is None:
                        assert suggestion.thought == ep.thoughts[i], f"{where}: turn {i + 1}'s expert thought differs"
                        assert suggestion.action == ep.actions[i], \
                            f"{where}: turn {i + 1}: the expert's action {_short(suggestion.action)} over HTTP, " \
                            f"{_short(ep.actions[i])} in process"
                    step = client.step(env_id, suggestion.action)
                    assert self.same(step.observation, want.observation) and step.done == want.done and \
                        math.isclose(step.reward, want.reward, abs_tol=1e-9) and step.valid and \
                        step.success == bool(want.success) and math.isclose(step.score, want.score, abs_tol=1e-9), \
                        f"{where}: turn {i + 1}: {step} over HTTP, {want} in process"
                    assert step.info.get("turn") == i + 1, f"{where}: turn {i + 1} counted as {step.info.get('turn')}"
                assert step.done and step.success, f"{where}: the expert's episode did not end in success"
                for what, args in (("step", (env_id, ep.actions[0])), ("policy_action", (env_id,))):
                    try:
                        getattr(client, what)(*args)
                    except EpisodeDone:
                        continue
                    raise AssertionError(f"{where}: /{what} after the end was not a 409")
                again = client.reset(env_id, task_id, split)  # after the episode: a simulator's world may
                # depend on what it loaded before (sciworld), the episode's on none
                assert self.same(again.observation, created.observation), f"{where}: /reset differs from /create"
                assert client.step(env_id, ep.actions[0]).info.get("turn") == 1, f"{where}: /reset kept the turns"
                client.close(env_id)
                try:
                    client.step(env_id, ep.actions[0])
                except SessionNotFound:
                    pass
                else:
                    raise AssertionError(f"{where}: a step of a closed session was not a 404")
            for task_id, bad_split in ((self.counts[split], split), (0, "no-such-split")):
                try:
                    client.create(task_id, bad_split)
                except (TaskNotFound, NotFound, ValidationFailed):
                    continue
                raise AssertionError(f"{name}: /create of task {task_id} of {bad_split!r} was not an error")
            assert client.health()["sessions"] == 0, f"{name}: sessions left open after /close"

    def check_agentgym(self, report: EnvironmentReport) -> None:
        import httpx

        from agentenv.interop.agentgym_server import create_agentgym_app

        routes = getattr(self.cls, "agentgym", None)
        if routes is None:
            return
        name, split = self.name, self.served_split
        raw = {**routes.options, **self.raw}
        served_cls, rest = profiles.split_options(self.cls, raw)
        if served_cls is not self.cls:  # AgentGym's routes serve another profile: check that one's
            first_split = served_cls.agentgym.index_order[0]
            n = served_cls.task_counts(None)[first_split]
            served = list(served_cls.agentgym.check_tasks) or [t for t in self.served if t < n] or [0]
            check_environment(served_cls, options=rest, splits=(first_split,), limit=0, served=served,
                              checks=("agentgym",), observation_key=self.key)
            return
        options = parse_options(self.cls, rest)
        shared = self.shared if options == self.options else self._load(options)
        counts = {str(k): v for k, v in self.cls.task_counts(shared).items()}
        native = self.native_episodes(report, options, shared)
        assert split in routes.index_order, f"{name}: AgentGym's index space has no {split!r} split"
        start = sum(counts[s] for s in routes.index_order[: routes.index_order.index(split)])
        total = sum(counts[s] for s in routes.index_order)
        p, key = routes.prefix.rstrip("/"), routes.handle
        config = ServerConfig(options=self.raw)
        with serve_app_in_thread(create_agentgym_app(self.cls, config)) as url, \
                httpx.Client(base_url=url, timeout=300) as http:

            def call(method: str, path: str, **kwargs: Any) -> Any:
                resp = http.request(method, p + path, **kwargs)
                assert resp.status_code == 200, f"{name} AgentGym {path}: HTTP {resp.status_code} {_short(resp.text)}"
                body = resp.json()
                assert not (isinstance(body, dict) and "error" in body), f"{name} AgentGym {path}: {body['error']}"
                return body

            def refused(path: str, body: dict[str, Any], says: str) -> None:
                resp = http.post(p + path, json=body)
                if routes.id_family:  # AgentGym's id-family servers answer errors with 200 and an "error"
                    assert resp.status_code == 200 and says in str(resp.json().get("error", "")), \
                        f"{name} AgentGym {path} {body}: {resp.status_code} {_short(resp.text)}, not an error"
                else:
                    assert resp.status_code >= 400, f"{name} AgentGym {path} {body}: {_short(resp.text)}, not an error"

            for path in dict.fromkeys(["/", p + "/" if p else "/"]):
                hello = http.get(path)
                assert hello.status_code == 200 and hello.json() == routes.hello, \
                    f"{name} AgentGym GET {path}: {_short(hello.text)}, not {routes.hello!r}"
            for task_id, ep in native.items():
                where, index = f"{name} AgentGym {split}/{task_id} (index {start + task_id})", start + task_id
                body = routes.create_json(index)
                created = call("POST", "/create", **({"json": body} if body is not None else {}))
                handle = created["id"] if routes.id_family else (
                    created.get(key) if routes.create_returns == "object" and isinstance(created, dict) else created)
                assert type(handle) is int, f"{where}: /create answered {_short(created)}, no handle"
                answer = call("POST", "/reset", json={key: handle, routes.reset_key: index, **routes.reset_extra})
                first: str | None = None
                if routes.reset_method:  # upstream's own answer, the page's text in it: the prompt is checked below
                    assert isinstance(answer, dict) and isinstance(answer.get("observation"), str), \
                        f"{where}: /reset answered {_short(answer)}"
                    part, whole = answer["observation"], ep.first_observation
                    if self.key is not None:
                        part, whole = self.key(part), self.key(whole)
                    assert part in whole, f"{where}: /reset's page {_short(part)} is not in the first observation"
                elif routes.reset_returns == "string":
                    assert isinstance(answer, str), f"{where}: /reset answered {_short(answer)}, not a string"
                    first = answer
                elif routes.reset_returns == "pair":
                    assert isinstance(answer, list) and len(answer) == 2 and isinstance(answer[0], str) and \
                        answer[1] is None, f"{where}: /reset answered {_short(answer)}, not [observation, null]"
                    first = answer[0]
                else:
                    assert isinstance(answer, dict) and isinstance(answer.get("observation"), str), \
                        f"{where}: /reset answered {_short(answer)}"
                    if routes.first_observation == "task_description":  # the client puts it back in front
                        desc = answer.get("task_description")
                        assert desc and ep.first_observation.startswith(desc), \
                            f"{where}: /reset's task_description {_short(desc)} does not start the observation"
                        rest = ep.first_observation[len(desc):].lstrip("\n")
                        assert self.same(answer["observation"], rest), \
                            f"{where}: /reset's observation {_short(answer['observation'])}, {_short(rest)} in process"
                    else:
                        first = answer["observation"]
                    if routes.first_observation == "available_actions" and self.key is None:
                        assert answer.get("available_actions") == ep.available[0], f"{where}: /reset's actions"
                # AgentGym's server answers without the rules its client shows first (and the actions it lists)
                upstream_first = routes.served_first(ep.first_observation)
                assert ep.first_observation.startswith(routes.with_rules(upstream_first)), \
                    f"{where}: the first observation does not start with the profile's rules"
                if first is not None:
                    assert self.same(first, upstream_first), \
                        f"{where}: /reset gave {_short(first)}, reset in process {_short(upstream_first)}"
                observed = call("GET", "/observation", params={key: handle})
                assert self.same(observed, upstream_first), f"{where}: GET /observation after /reset"
                if self.key is None and "/available_actions" not in routes.extras:  # (else upstream's own shape)
                    actions = call("GET", "/available_actions", params={key: handle})
                    assert actions == ep.available[0], f"{where}: GET /available_actions after /reset"
                for path in routes.extras:
                    call("GET", path, params={key: handle})
                rewards, running = [], 0.0
                for i, (action, want) in enumerate(zip(ep.actions, ep.results, strict=True)):
                    running += want.reward  # a running-reward server sends the episode's value so far
                    got = call("POST", "/step", json={key: handle, "action": action})
                    turn = f"{where}: turn {i + 1} ({_short(action, 80)})"
                    wanted = {routes.step_observation, "reward", routes.step_done}
                    assert isinstance(got, dict) and wanted <= set(got), f"{turn}: /step answered {_short(got)}"
                    got["done"] = got[routes.step_done]
                    assert self.same(got[routes.step_observation], want.observation), \
                        f"{turn}: /step's observation {_short(got[routes.step_observation])}, in process " \
                        f"{_short(want.observation)}"
                    scale = (routes.score_scale or 1.0) if routes.id_family else 1.0  # in the server's scale
                    sent = running if routes.running_reward else want.reward
                    assert got["done"] == want.done and math.isclose(got["reward"], sent * scale, abs_tol=1e-9), \
                        f"{turn}: /step's reward and done {got['reward']}, {got['done']}; in process " \
                        f"{want.reward}, {want.done}"
                    if routes.id_family and self.key is None and not want.done:
                        assert got.get("available_actions") == ep.available[i + 1], f"{turn}: available_actions"
                    rewards.append(got["reward"])
                if routes.score_scale:  # what AgentGym's client reads as the episode's reward
                    read = got["score"] / routes.score_scale
                elif routes.running_reward:
                    read = got["reward"]
                else:
                    read = sum(rewards)
                assert got["done"] and math.isclose(read, ep.total, abs_tol=1e-6), \
                    f"{where}: AgentGym's client reads a return of {read}, the episode's is {ep.total}"
                refused("/step", {key: handle, "action": ep.actions[0]}, "finished")
                refused("/step", {key: 10**6, "action": ep.actions[0]}, "not valid")
                refused("/reset", {key: handle, routes.reset_key: total}, "not valid")
                if routes.has_close:
                    closed = call("POST", "/close", json={key: handle})
                    assert closed == (True if routes.id_family else routes.close_returns), f"{where}: /close {closed}"
