"""Expert trajectories in AgentTraj form: the behaviour-cloning data of AgentEvol's iteration 0.

    python -m openmanus_rl.expert_data --env maze,wordle [--max-per-env 200] [--out data/expert]

For every environment, the environment's own expert (``/policy_action``) plays train tasks
``0..N-1`` through the evaluator's episode runner (``openmanus_rl.evaluate``), so each item has the
training prompt (``prompts.initial_messages``) and ReAct replies (``prompts.format_reply``) with
``loss`` true on the agent's turns. Only successful episodes are kept (reward at or above the
``success_threshold`` its server declares), at most ``--max-per-env`` of them, written atomically to
``OUT/<env>.jsonl``. Published AgentTraj files need no conversion: ``trajectories.read`` loads them.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentenv import registry
from agentenv.errors import NotSupported
from agentenv.launcher import ServerError, env_servers, parse_server_specs, server_info
from openmanus_rl import atomic, evaluate, trajectories
from openmanus_rl.policies import GenerationSettings, PolicySpec, build_policy


def success_threshold(urls: Sequence[str], token: str | None = None) -> float:
    """The ``success_threshold`` an environment's server declares (``/info``): the environment may
    run elsewhere, from another venv, so it is never read by importing the environment."""
    return server_info(urls, token).success_threshold


def successful(items: Iterable[dict[str, Any]], threshold: float | None) -> list[dict[str, Any]]:
    """Items that :func:`succeeded`."""
    return [it for it in items if succeeded(it, threshold)]


def succeeded(item: dict[str, Any], threshold: float | None) -> bool:
    """Whether one item is a success: its reward reaches ``threshold`` and, where the item records the
    environment's own ``success`` flag, that flag is true. The flag matters once a shaping reward is on
    (``progress_reward``): a failed episode's reward can then pass the threshold. A published AgentTraj file
    has no flag, so its items are judged by reward; without a threshold only the flag decides."""
    if threshold is None:
        return bool(item.get("success"))
    return float(item.get("reward", 0.0)) >= threshold and trajectories.flagged_success(item)


def write_atomic(path: Path, items: Iterable[dict[str, Any]]) -> int:
    """AgentTraj JSON lines written whole or not at all."""
    with atomic.path(path) as tmp:
        return trajectories.write(tmp, items)


def play(urls: Mapping[str, Sequence[str]], envs: Sequence[str], policy: str | PolicySpec, split: str = "train",
         tasks: int | Mapping[str, int | None] | None = None, seed: int = 0, concurrency: int = 16,
         settings: GenerationSettings | None = None, max_turns: int | Mapping[str, int | None] | None = None,
         on_env: Callable[[str, dict[str, Any]], None] | None = None,
         start: int | Mapping[str, int] | None = None) -> dict[str, Any]:
    """The evaluator's result document for ``policy`` on ``tasks`` tasks of ``split`` from task ``start`` (default
    0; each one number for all or per environment); ``on_env`` is called with each environment's metrics as it
    finishes."""
    spec = policy if isinstance(policy, PolicySpec) else evaluate.parse_policy_spec(policy)
    settings = settings or GenerationSettings(seed=seed)
    cfg = evaluate.EvalConfig(envs=list(envs), policy=spec, servers={e: list(urls[e]) for e in envs}, split=split,
                              limit=tasks, start=start, concurrency=concurrency, seed=seed, settings=settings,
                              max_turns=max_turns, progress=False, on_env=on_env)
    return asyncio.run(evaluate.evaluate(cfg.servers, build_policy(spec, settings), cfg))


class NoExpertData(ServerError):
    """An environment whose server has no expert and for which no trajectories were given (a user's mistake the
    launchers print as one line)."""


def collect(envs: Sequence[str], out_dir: str | Path, max_per_env: int | Mapping[str, int] = 200,
            urls: Mapping[str, Sequence[str]] | None = None, seed: int = 0, concurrency: int = 16,
            given: Mapping[str, str | Path] | None = None) -> dict[str, Path]:
    """Write ``out_dir/<env>.jsonl`` (successful expert episodes of the train split) for each env; an env in
    ``given`` takes the trajectories of that AgentTraj file instead (its successful ones, at most its cap):
    the way to clone an environment whose server has no expert (an OpenEnv server) or published trajectories.
    ``max_per_env`` is one cap for all or one per environment (an environment whose episodes teach less per
    episode, or whose agent needs more of them, gets more)."""
    out = Path(out_dir)
    if urls is None:
        with env_servers(envs) as started:
            return collect(envs, out, max_per_env, started, seed, concurrency, given)
    caps = max_per_env if isinstance(max_per_env, Mapping) else dict.fromkeys(envs, max_per_env)
    paths = {}
    for env in envs:
        paths[env] = out / f"{env}.jsonl"
        if env in (given or {}):
            source = Path(given[env])  # type: ignore[index]
            kept = successful(trajectories.read(source), None)[:caps[env]]
            if not kept:
                raise NoExpertData(f"{source} holds no successful trajectory for {env}")
            write_atomic(paths[env], kept)
            print(f"expert_data: {env}: {len(kept)} given trajectories from {source} -> {paths[env]}", flush=True)
            continue
        try:
            result = play(urls, [env], "expert", "train", caps[env], seed, concurrency)
        except NotSupported as e:
            raise NoExpertData(f"{env}: {e.message}; give expert trajectories (AgentTraj JSON lines) with "
                               f"data.expert_files.{env}=FILE") from None
        kept = successful(result["trajectories"], result["envs"][env]["success_threshold"])[:caps[env]]
        write_atomic(paths[env], kept)
        print(f"expert_data: {env}: kept {len(kept)} of {len(result['trajectories'])} expert episodes -> "
              f"{paths[env]}", flush=True)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", required=True, help="NAME[,NAME...] or all")
    p.add_argument("--out", default="data/expert", help="directory for <env>.jsonl")
    p.add_argument("--max-per-env", type=int, default=200, help="size cap per environment (train tasks 0..N-1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--server", action="append", default=[], help="NAME=URL of a running server (repeatable)")
    args = p.parse_args(argv)
    envs = registry.parse_names(args.env)
    given = parse_server_specs(args.server)
    with env_servers([e for e in envs if e not in given]) as started:
        collect(envs, args.out, args.max_per_env, {**given, **started}, args.seed, args.concurrency)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
