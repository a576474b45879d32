"""agentenv-eval: score a policy on every environment's test split, or on AgentGym's AgentEval, with one command.

    agentenv-eval --env maze,wordle,babyai --policy expert --output expert.json
    agentenv-eval --env all --policy hf:/ckpt/merged --limit 50 --concurrency 16
    agentenv-eval --env maze --policy openai:http://127.0.0.1:8000/v1 --server maze=http://10.0.0.5:8000
    agentenv-eval --suite agenteval --items AgentItemId --policy hf:/ckpt --server webshop=agentgym+http://HOST:PORT#webshop
    agentenv-eval merge expert.json hf.json --plot results.png

The test splits are each environment's own generated tasks (this project's task sets), not AgentEval.
``--suite agenteval`` scores exactly AgentEval's published items (AgentGym's 1,160 item ids, read from
``--items`` or ``$AGENTGYM_ITEMS``; :mod:`agentenv.interop.agentgym_items`) on AgentGym's own servers
(``--server NAME=agentgym+http://...``), and reports AgentGym's metric beside the success rate: its
evaluator's mean final reward (``agentgym_score``) and the share of items whose final reward is 1
(``agentgym_success``). Environments it cannot run are listed with why (``not_run``).

Fair and repeatable: every policy plays the same tasks (task ids ``0..N-1`` of the split), with the
same seeds, through the same protocol; LLM policies see the training prompts (``prompts.py``) and
are parsed by the training parser (``actions.py``). An episode whose *server* failed is rerun, not
scored (``agentenv.rollout.server_failed``). It writes one JSON file (per-environment metrics and
every trajectory in AgentTraj form, see :func:`trajectory`) only once the whole run succeeded, and
prints the results table (:mod:`openmanus_rl.eval_report`).

Exit status: 0 done, 2 bad input (unknown environment or policy, unreachable ``--server``, a path
that is no checkpoint), 1 the run failed (a server kept failing, the chat endpoint refused).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import math
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from agentenv import registry
from agentenv.client import EnvPool, EnvSession
from agentenv.errors import AgentEnvError
from agentenv.launcher import ServerError, check_servers, env_servers, parse_option_specs, parse_server_specs
from agentenv.policies import Decision, Policy
from agentenv.protocol import InfoResponse
from agentenv.rollout import Episode, run_episodes, summarize
from openmanus_rl import atomic, datasets, machine, per_env, prompts, trajectories
from openmanus_rl.eval_report import FORMAT, merge_main, results_table
from openmanus_rl.policies import GenerationSettings, PolicySpec, PolicySpecError, build_policy, parse_policy_spec
from openmanus_rl.policies.openai_api import EndpointError

EXIT_FAILED, EXIT_USAGE = 1, 2


class EvalError(Exception):
    """A problem to report in one line, with the exit status it means."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class EvalConfig:
    envs: list[str]
    policy: PolicySpec
    servers: dict[str, list[str]] = field(default_factory=dict)  # given with --server; the rest are started
    split: str = "test"
    limit: int | Mapping[str, int | None] | None = None  # first N tasks; or per environment (openmanus_rl.per_env)
    start: int | Mapping[str, int] | None = None  # the first task played (default 0); or per environment
    concurrency: int = 8
    max_turns: int | Mapping[str, int | None] | None = None  # or per environment (openmanus_rl.per_env)
    seed: int = 0
    retries: int = 3
    token: str | None = None
    label: str | None = None
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    dtype: str = "auto"  # hf/verl weights
    device: str = "auto"
    progress: bool = True
    options: dict[str, dict[str, str]] = field(default_factory=dict)  # server options of started environments
    suite: str | None = None  # "agenteval": the published items on AgentGym's servers
    items: Path | None = None  # the published item ids (AgentItemId/) of --suite agenteval
    not_run: dict[str, str] = field(default_factory=dict)  # environments of the suite it cannot run, and why
    #: --suite agenteval on this project's servers in their agentgym profile: the upstream indices played per
    #: environment (AgentEval's items; the profile's task N is upstream's task N)
    items_played: dict[str, list[int]] = field(default_factory=dict)
    #: called with each environment's name and metrics as soon as it is evaluated (a caller's progress lines)
    on_env: Callable[[str, dict[str, Any]], None] | None = None


# -- trajectories and metrics --------------------------------------------------------------------


def replies(ep: Episode, info: InfoResponse) -> list[str]:
    """What the policy said each turn: an LLM's raw replies; for scripted policies, which have none,
    the action (with the expert's thought where the environment gives one) in the form the prompts
    ask for (``prompts.format_reply``), so their trajectories train a model that answers the way the
    parser reads."""
    return [t.reply if t.reply is not None else prompts.format_reply(t.action, t.thought, info) for t in ep.turns]


def conversation(ep: Episode, info: InfoResponse) -> list[dict[str, str]]:
    """The chat of an episode as the policy saw it: the training prompt with the first observation,
    then each reply followed by the observation it led to. It ends on the last reply (as AgentTraj
    items do); the observation after it is kept as ``final_observation``."""
    messages = prompts.initial_messages(info, ep.instruction)
    for i, reply in enumerate(replies(ep, info)):
        if i:
            messages.append(prompts.observation_message(ep.turns[i - 1].observation))
        messages.append({"role": "assistant", "content": reply})
    return messages


def trajectory(ep: Episode, info: InfoResponse) -> dict[str, Any]:
    """An episode as an AgentTraj item (plus a few fields AgentTraj readers ignore)."""
    upstream = {"agentgym_index": ep.meta["agentgym_index"]} if "agentgym_index" in ep.meta else {}
    return trajectories.from_messages(
        ep.env, ep.task_id, conversation(ep, info), ep.reward, ep.success,
        turns=ep.num_turns, done=ep.done, score=ep.score, actions=[t.action for t in ep.turns],
        invalid_actions=ep.invalid_actions, format_errors=ep.format_errors,
        first_observation=ep.instruction, final_observation=ep.turns[-1].observation if ep.turns else None,
        **upstream)


def env_metrics(episodes: Sequence[Episode], server_retries: int) -> dict[str, Any]:
    """``agentenv.rollout.summarize`` plus the format-error rate (replies not in the environment's
    action format, or cut; ``invalid_rate`` is the environment's own ``valid`` flag) and how many
    reruns server failures cost; on AgentGym's servers, AgentGym's own metric too (its evaluator's: the
    mean of each episode's final reward as its client reports it, and the share equal to 1)."""
    metrics: dict[str, Any] = dict(summarize(episodes))
    turns = sum(e.num_turns for e in episodes)
    metrics["format_error_rate"] = round(sum(e.format_errors for e in episodes) / max(1, turns), 4)
    metrics["server_retries"] = server_retries
    if episodes and any("agentgym_index" in e.meta for e in episodes):
        final = [float(e.meta.get("agentgym_reward", 0.0)) for e in episodes]
        metrics["agentgym_score"] = round(sum(final) / len(final), 4)
        metrics["agentgym_success"] = round(sum(r == 1 for r in final) / len(final), 4)
    return metrics


class _CountingAborts(Policy):
    """Wraps a policy to count episode attempts aborted by a failure (reported as server_retries)."""

    def __init__(self, inner: Policy) -> None:
        self.inner, self.name, self.aborted = inner, inner.name, 0

    async def begin(self, session: EnvSession, episode: Episode) -> None:
        await self.inner.begin(session, episode)

    async def act(self, session: EnvSession, observation: str) -> Decision | str:
        return await self.inner.act(session, observation)

    async def end(self, session: EnvSession, episode: Episode, error: BaseException | None) -> None:
        self.aborted += error is not None
        await self.inner.end(session, episode, error)


# -- the run -------------------------------------------------------------------------------------


async def evaluate_env(urls: list[str], env: str, policy: Policy, cfg: EvalConfig) -> tuple[dict, list[dict]]:
    """Metrics and trajectories of ``policy`` on one environment's split."""
    async with EnvPool(urls, token=cfg.token) as pool:
        info = await pool.info()
        if cfg.split not in info.splits:
            raise EvalError(f"{env} has no split {cfg.split!r} (it has {', '.join(info.splits)})")
        n = int(info.splits[cfg.split])
        if n == 0:
            raise EvalError(f"the {cfg.split} split of {env} has no tasks")
        task_ids = list(range(n))
        if cfg.suite and env in cfg.items_played:  # a server of this project playing AgentGym's tasks
            if info.profile != "agentgym":
                raise EvalError(f"{env}'s server plays its {info.profile} profile, not agentgym")
            task_ids = list(cfg.items_played[env])
            past = [t for t in task_ids if t >= n]
            if past:
                raise EvalError(f"{env}'s agentgym profile has {n} tasks; AgentEval names {past[:5]}")
            n = len(task_ids)
        elif cfg.suite and (info.options or {}).get("task_set") != "agentgym-items":
            raise EvalError(f"{env}'s server does not address AgentEval's items (its tasks: "
                            f"{(info.options or {}).get('task_set', 'its own')})")
        first = per_env.value_for(cfg.start, env, "start") or 0
        if first and cfg.suite:
            raise EvalError("a suite plays its published items; it takes no start")
        limit = per_env.value_for(cfg.limit, env, "limit")
        try:
            chosen = datasets.task_range(env, cfg.split, len(task_ids), first, limit)
        except ValueError as e:
            raise EvalError(str(e)) from None
        task_ids = task_ids[chosen.start:chosen.stop]
        plan = getattr(policy, "plan", None)
        if plan is not None:
            plan(len(task_ids), cfg.concurrency)
        counting = _CountingAborts(policy)
        max_turns = per_env.value_for(cfg.max_turns, env, "max_turns")
        episodes = await run_episodes(pool, env, task_ids, counting, split=cfg.split, concurrency=cfg.concurrency,
                                      seed=cfg.seed, max_turns=max_turns, retries=cfg.retries,
                                      progress=cfg.progress)
    metrics = {"tasks": n, "max_turns": min(int(info.max_turns), max_turns or math.inf),
               "success_threshold": info.success_threshold, **env_metrics(episodes, counting.aborted)}
    return metrics, [trajectory(ep, info) for ep in episodes]


async def evaluate(urls: dict[str, list[str]], policy: Policy, cfg: EvalConfig) -> dict[str, Any]:
    """The whole result document (its fields: docs/evaluation.md)."""
    started, t0 = datetime.now(timezone.utc), time.perf_counter()
    envs: dict[str, Any] = {}
    items: list[dict[str, Any]] = []
    try:
        start = getattr(policy, "start", None)
        if start is not None:
            await start()
        for env in cfg.envs:
            envs[env], trajs = await evaluate_env(urls[env], env, policy, cfg)
            items.extend(trajs)
            if cfg.on_env is not None:
                cfg.on_env(env, envs[env])
        stats = getattr(policy, "stats", None)
    finally:
        aclose = getattr(policy, "aclose", None)
        if aclose is not None:
            await aclose()
    settings = cfg.settings if cfg.policy.kind not in ("expert", "random") else None
    return {
        "format": FORMAT,
        "label": cfg.label or policy.name,
        "policy": policy_string(cfg.policy),
        "suite": cfg.suite,
        "items": str(cfg.items) if cfg.items else None,
        "not_run": dict(cfg.not_run),
        "split": cfg.split,
        "seed": cfg.seed,
        "limit": cfg.limit,
        "max_turns": cfg.max_turns,
        "generation": dataclasses.asdict(settings) if settings else None,
        "envs": envs,
        "average": {k: round(sum(m[k] for m in envs.values()) / len(envs), 4)
                    for k in ("success_rate", "avg_reward", "avg_turns", "invalid_rate", "format_error_rate")},
        "trajectories": items,
        "run": {"started": started.isoformat(timespec="seconds"), "seconds": round(time.perf_counter() - t0, 2),
                "concurrency": cfg.concurrency, "servers": urls, "policy_stats": stats() if stats else None,
                "machine": machine.describe()},
    }


def policy_string(spec: PolicySpec) -> str:
    if spec.kind == "openai":
        return f"openai:{spec.target}" + (f":{spec.model}" if spec.model else "")
    return spec.kind if spec.target is None else f"{spec.kind}:{spec.target}"


def write_json(path: Path, data: dict[str, Any]) -> None:
    atomic.write_json(path, data)


def run(cfg: EvalConfig, output: Path) -> dict[str, Any]:
    """Check the inputs, load the policy, start what servers are missing, evaluate, write ``output``."""
    try:
        check_servers(cfg.servers, cfg.token)
    except ServerError as e:
        raise EvalError(str(e)) from e
    if not cfg.progress and cfg.policy.kind in ("hf", "verl"):
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    try:
        policy = build_policy(cfg.policy, cfg.settings, dtype=cfg.dtype, device=cfg.device)
    except (ValueError, OSError) as e:
        raise EvalError(f"cannot load policy {policy_string(cfg.policy)}: {e}") from e
    try:
        with env_servers(cfg.envs, given=cfg.servers, token=cfg.token, options=cfg.options) as urls:
            try:
                result = asyncio.run(evaluate(urls, policy, cfg))
            except (AgentEnvError, EndpointError) as e:
                raise EvalError(f"evaluation failed: {e}", EXIT_FAILED) from e
    except ServerError as e:
        raise EvalError(str(e), EXIT_FAILED) from e
    write_json(output, result)
    return result


# -- command line ----------------------------------------------------------------------------------


def resolve_envs(spec: str | None, servers: dict[str, list[str]]) -> list[str]:
    """``--env`` names (or ``all``, or the ``--server`` names when it is omitted); environments this
    command must start have to be installed, ones given with ``--server`` need not be."""
    if spec is None:
        if not servers:
            raise EvalError("name the environments: --env NAME[,NAME...] or --env all")
        return list(servers)
    names = registry.names() if spec.strip() == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise EvalError(f"--env {spec!r} names no environment")
    for name in names:
        if name not in servers:
            try:
                registry.entry_point(name)
            except registry.UnknownEnvironment as e:
                raise EvalError(str(e)) from e
    return list(dict.fromkeys(names))


SUITE_SERVER_HINT = "give --server {env}=agentgym+http://HOST:PORT#{env} (AgentGym's own server of it)"


def agenteval_envs(names: list[str], servers: dict[str, list[str]], items: Path,
                   options: dict[str, dict[str, Any]] | None = None
                   ) -> tuple[list[str], dict[str, str], dict[str, list[int]]]:
    """The environments of ``--suite agenteval`` it can run, and those it cannot, with why. It runs one with a
    published item list on the AgentGym server given for it, or, given none, offline on this project's server
    in its ``agentgym`` profile (returned with the upstream indices to play) if that profile can load its data
    with the ``options`` given for it (todo's reads AgentGym's files from a path); this project's own tasks are
    not AgentEval's."""
    from agentenv import addresses
    from agentenv.interop import agentgym_items
    from agentenv.interop.agentgym_routes import routes_of

    runnable, not_run, offline = [], {}, {}
    for env in names:
        try:
            native = registry.load(env)
            prefix = routes_of(native).item_prefix or env
        except (registry.UnknownEnvironment, AgentEnvError) as e:
            not_run[env] = str(e)
            continue
        has_profile = "agentgym" in native.profiles
        if not (items / "eval" / f"{prefix}_test.json").is_file():
            not_run[env] = f"no AgentEval list for it under {items} ({prefix}_test.json)"
        elif env not in servers and has_profile:
            why = profile_cannot_load(native, (options or {}).get(env, {}))
            if why:
                not_run[env] = f"its agentgym profile cannot start here: {why}"
                continue
            offline[env] = list(agentgym_items.load(items, prefix).test)
            runnable.append(env)
        elif not all(addresses.is_agentgym_url(u) for u in servers.get(env, [""])):
            why = ("the server given plays this project's own tasks; give none (its agentgym profile is served) or "
                   if has_profile else "it has no agentgym profile here, and its own tasks are not AgentEval's; ")
            not_run[env] = why + SUITE_SERVER_HINT.format(env=env)
        else:
            runnable.append(env)
    return runnable, not_run, offline


def profile_cannot_load(native: type, options: dict[str, Any]) -> str | None:
    """Why ``native``'s agentgym profile cannot load its shared data with ``options`` (None: it can)."""
    from agentenv import profiles

    try:
        cls, rest = profiles.split_options(native, {**options, profiles.PROFILE_KEY: "agentgym"})
        cls.load_shared(cls.Options(**rest))
    except (ValueError, OSError, TypeError) as e:
        return str(e).splitlines()[0]
    return None


def default_output(label: str, split: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "policy"
    return Path("outputs") / "eval" / f"{safe}_{split}_{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agentenv-eval",
        description="Score a policy on environments' test splits, or on AgentEval (--suite agenteval). "
                    "`agentenv-eval merge FILE... [--plot PNG]` tabulates several result files.")
    p.add_argument("--env", default=None, help="NAME[,NAME...] or all (default: the --server names)")
    p.add_argument("--suite", choices=["agenteval"], default=None,
                   help="agenteval: AgentGym's published test items on AgentGym's servers (see --items)")
    p.add_argument("--items", default=None,
                   help="AgentGym's published item ids (AgentGym-RL's AgentItemId directory; default: $AGENTGYM_ITEMS)")
    p.add_argument("--policy", required=True,
                   help="expert | random | hf:PATH | openai:BASE_URL[:MODEL] | verl:CKPT")
    p.add_argument("--split", default="test")
    p.add_argument("--option", action="append", default=[], metavar="NAME.KEY=VALUE",
                   help="an option of an environment server this command starts (repeat)")
    p.add_argument("--limit", default=None,
                   help="only the first N tasks of each split; or per environment: '{maze: 300, default: 50}'")
    p.add_argument("--concurrency", type=int, default=8, help="episodes at once per environment (the HF batch size)")
    p.add_argument("--max-turns", default=None,
                   help="cap on turns per episode (default: the env's own); or per environment: "
                        "'{maze: 15, alfworld: 30, default: 20}'")
    p.add_argument("--output", default=None, help="result JSON (default: outputs/eval/LABEL_SPLIT_TIME.json)")
    p.add_argument("--server", action="append", default=[], metavar="NAME=URL",
                   help="use a running server instead of starting one (repeat; several URLs = replicas)")
    p.add_argument("--seed", type=int, default=0, help="environment and sampling seed")
    p.add_argument("--retries", type=int, default=3, help="reruns of an episode whose server failed")
    p.add_argument("--token", default=os.environ.get("AGENTENV_TOKEN"), help="environment servers' bearer token")
    p.add_argument("--label", default=None, help="row name in tables (default: from the policy)")
    g = p.add_argument_group("LLM policies")
    g.add_argument("--max-new-tokens", default="256",
                   help="reply length bound per turn; or per environment: '{babyai: 24, textcraft: 192, default: 128}'")
    g.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    g.add_argument("--top-p", type=float, default=1.0)
    g.add_argument("--dtype", default="auto", help="hf/verl weights: auto (fp32 on CPU, bf16 on GPU), float32, ...")
    g.add_argument("--device", default="auto", help="hf/verl: auto, cpu, cuda, cuda:1, ...")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p


def per_env_count(text: str | None, flag: str, envs: Sequence[str],
                  optional: bool = False) -> int | dict[str, int | None] | None:
    """``flag``'s count, or its YAML mapping of counts per environment (:mod:`openmanus_rl.per_env`)."""
    if text is None:
        return None
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        value = None
    if not isinstance(value, int | dict) or isinstance(value, bool):
        raise EvalError(f"{flag} takes a number or a mapping such as '{{maze: 15, default: 20}}', not {text!r}")
    try:
        counts = per_env.positive_ints(value, envs, flag, optional=optional)
    except ValueError as e:
        raise EvalError(str(e)) from e
    return counts if isinstance(value, dict) else value


def config_from_args(args: argparse.Namespace) -> EvalConfig:
    if args.concurrency < 1:
        raise EvalError(f"--concurrency must be at least 1, not {args.concurrency}")
    if args.retries < 0 or args.temperature < 0 or not 0 < args.top_p <= 1:
        raise EvalError("--retries and --temperature must be >= 0, --top-p in (0, 1]")
    try:
        spec = parse_policy_spec(args.policy)
    except PolicySpecError as e:
        raise EvalError(str(e)) from e
    try:
        servers = parse_server_specs(args.server)
        options = parse_option_specs(args.option)
    except ServerError as e:
        raise EvalError(str(e)) from e
    suite, items, not_run, offline = args.suite, None, {}, {}
    if suite == "agenteval":
        from agentenv.interop import agentgym_items

        items = agentgym_items.items_root(args.items)
        if items is None or not (items / "eval").is_dir():
            raise EvalError("--suite agenteval needs AgentGym's published item ids: --items DIR (AgentGym-RL's "
                            f"AgentItemId, holding eval/) or ${agentgym_items.ITEMS_VAR}"
                            + (f"; {items} has no eval/" if items else ""))
        envs, not_run, offline = agenteval_envs(resolve_envs(args.env or "all", servers), servers, items.resolve(),
                                                  options)
        for env in offline:  # served here in the agentgym profile
            options.setdefault(env, {})["profile"] = "agentgym"
        if not envs:
            raise EvalError("no environment of --suite agenteval can run here: "
                            + "; ".join(f"{env}: {why}" for env, why in not_run.items()))
        if args.split != "test":
            raise EvalError("--suite agenteval plays AgentEval's test items; drop --split")
        os.environ[agentgym_items.ITEMS_VAR] = str(items.resolve())  # the AgentGym clients read it
    elif args.items is not None:
        raise EvalError("--items goes with --suite agenteval")
    else:
        envs = resolve_envs(args.env, servers)
    limit = per_env_count(args.limit, "--limit", envs, optional=True)  # null: the whole split
    max_turns = per_env_count(args.max_turns, "--max-turns", envs, optional=True)  # null: the environment's own
    max_new_tokens = per_env_count(args.max_new_tokens, "--max-new-tokens", envs)
    settings = GenerationSettings(max_new_tokens=max_new_tokens, temperature=args.temperature,
                                  top_p=args.top_p, seed=args.seed)
    return EvalConfig(envs=envs, policy=spec, servers={k: v for k, v in servers.items() if k in envs},
                      split=args.split, limit=limit, concurrency=args.concurrency, max_turns=max_turns,
                      seed=args.seed, retries=args.retries, token=args.token or None, label=args.label,
                      settings=settings, dtype=args.dtype, device=args.device, progress=not args.quiet,
                      options=options, suite=suite, items=items.resolve() if items else None, not_run=not_run,
                      items_played=offline)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        return merge_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        cfg = config_from_args(args)
        output = Path(args.output) if args.output else default_output(cfg.label or cfg.policy.label, cfg.split)
        if output.is_dir():
            raise EvalError(f"--output {output} is a directory")
        result = run(cfg, output)
    except EvalError as e:
        print(f"agentenv-eval: {e}", file=sys.stderr)
        return e.code
    print(results_table([result]))
    if result["suite"] == "agenteval":
        print("\nAgentGym's metric (agentgym_score: its evaluator's mean final reward, x100):")
        print(results_table([result], metric="agentgym_score"))
    for env, why in result["not_run"].items():
        print(f"not run: {env}: {why}")
    print(f"results written to {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
