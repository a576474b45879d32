"""The ``agentenv`` command: list, serve, new, play."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from agentenv import registry
from agentenv.addresses import ServerError
from agentenv.errors import AgentEnvError


def _cmd_list(args: argparse.Namespace) -> int:
    names = registry.names()
    if args.json:
        print(json.dumps(names))
        return 0
    if not names:
        print("no environments installed (pip install -e agentgym/agentenv-<name>)", file=sys.stderr)
    for name in names:
        dist = registry.entry_point(name).dist
        where = f"{dist.name} {dist.version}" if dist is not None else ""
        print(f"{name:12s} {where}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    import logging

    from agentenv.server import ServerConfig, serve

    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    env_cls = registry.load(args.name)
    options = {**_config_file_options(args.config), **_key_values(args.option)}
    config = ServerConfig(max_sessions=args.max_sessions, session_ttl=args.session_ttl,
                          token=args.token or os.environ.get("AGENTENV_TOKEN") or None,
                          max_body_bytes=args.max_body_bytes, max_action_chars=args.max_action_chars,
                          threads=args.threads, options=options)
    factory = None
    if args.compat == "agentgym":  # AgentGym's own routes and JSON for this environment
        from agentenv.interop.agentgym_routes import routes_of
        from agentenv.interop.agentgym_server import create_agentgym_app

        routes_of(env_cls)  # fails early, and clearly, for an environment that declares none
        factory = create_agentgym_app
    elif args.compat == "openenv":  # OpenEnv's protocol (WS /ws, /schema): TRL, SkyRL and OpenEnv's clients
        from agentenv.interop.openenv_server import create_openenv_app

        factory = create_openenv_app
    serve(env_cls, host=args.host, port=args.port, config=config, log_level=args.log_level, app_factory=factory)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from agentenv.interop.openenv_export import export

    out = export(args.name, args.out or f"{args.name}-openenv")
    print(f"wrote {out}: openenv.yaml, server/app.py, server/Dockerfile, src/ "
          f"(docker build -f {out}/server/Dockerfile {out})")
    return 0


def _key_values(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--option takes KEY=VALUE, not {item!r}")
        out[key.strip()] = value
    return out


def _config_file_options(path: str | None) -> dict:
    """Options from a YAML or JSON file: a mapping of option names to values."""
    if path is None:
        return {}
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except OSError as e:
        raise ValueError(f"cannot read --config {path}: {e}") from None
    except yaml.YAMLError as e:  # its message spans lines (with a snippet): keep the one line that says what
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ValueError(f"cannot read --config {path}: {getattr(e, 'problem', None) or e}{where}") from None
    if not isinstance(data, dict):
        raise ValueError(f"--config {path} must hold a mapping of option names to values")
    return {str(key): value for key, value in data.items()}  # Options(**data) needs string keys


def _cmd_new(args: argparse.Namespace) -> int:
    from agentenv.scaffold import scaffold

    path = scaffold(args.name, args.dir, kind=args.kind)
    print(f"created {path}")
    print(f"next: bash {path}/setup.sh && agentenv serve {args.name}")
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    from agentenv.client import EnvPool
    from agentenv.launcher import env_servers, parse_server_specs
    from agentenv.policies import scripted_policy
    from agentenv.rollout import run_episodes, summarize

    policy = scripted_policy(args.policy)

    async def play(urls: list[str]) -> list:
        async with EnvPool(urls, token=args.token) as pool:
            info = await pool.info()
            if args.split not in info.splits:
                raise ValueError(f"{args.name} has no split {args.split!r} (it has {', '.join(info.splits)})")
            n = info.splits[args.split]
            task_ids = list(range(n if args.limit is None else min(n, args.limit)))
            return await run_episodes(pool, args.name, task_ids, policy, split=args.split,
                                      concurrency=args.concurrency, seed=args.seed, progress=not args.quiet)

    options = _key_values(args.option)
    if args.screenshots:  # the server saves them (a browser environment's option): say where, absolutely
        if "screenshots" not in registry.load(args.name).Options.model_fields:
            raise ValueError(f"{args.name} shows no screen: --screenshots is for browser environments (webarena)")
        options["screenshots"] = str(Path(args.screenshots).resolve())
    # a URL of any kind addresses.py reads (agentgym+ and openenv+ ones are named after the environment played)
    given = parse_server_specs([f"{args.name}={u}" for u in args.server]) if args.server else None
    with env_servers([args.name], given=given, token=args.token, options={args.name: options}) as urls:
        episodes = asyncio.run(play(urls[args.name]))
    if args.output:
        with open(args.output, "w") as f:
            f.writelines(json.dumps(ep.to_dict()) + "\n" for ep in episodes)
    print(json.dumps({"env": args.name, "policy": args.policy, "split": args.split, **summarize(episodes)}))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentenv", description="AgentGym-style environment servers (protocol v1)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("list", help="installed environments")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=_cmd_list)

    s = sub.add_parser("serve", help="serve one environment over HTTP")
    s.add_argument("name")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    s.add_argument("--max-sessions", type=int, default=1024)
    s.add_argument("--session-ttl", type=float, default=900.0, help="seconds before an idle session is closed")
    s.add_argument("--token", default=None, help="bearer token guarding every route but /health "
                                                 "(default: $AGENTENV_TOKEN)")
    s.add_argument("--max-body-bytes", type=int, default=1 << 20)
    s.add_argument("--max-action-chars", type=int, default=16384)
    s.add_argument("--threads", type=int, default=None, help="environment thread pool size")
    s.add_argument("--log-level", default="warning")
    s.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of the environment (repeat); see its README or /info")
    s.add_argument("--config", default=None, help="YAML/JSON file of the environment's options (--option wins)")
    s.add_argument("--compat", default=None, choices=["agentgym", "openenv"],
                   help="answer another convention's routes instead of protocol v1 (agentgym: AgentGym's own; openenv: "
                        "OpenEnv's WebSocket sessions and schemas)")
    s.set_defaults(fn=_cmd_serve)

    s = sub.add_parser("export", help="write an environment as another ecosystem's package (openenv: its manifest, "
                                      "app and Dockerfile)")
    s.add_argument("format", choices=["openenv"])
    s.add_argument("name")
    s.add_argument("--out", default=None, help="the directory to write (default: ./NAME-openenv)")
    s.set_defaults(fn=_cmd_export)

    s = sub.add_parser("new", help="scaffold a new environment package")
    s.add_argument("name")
    s.add_argument("--dir", default=None, help="where to create agentenv-NAME (default: ./agentgym if it exists)")
    s.add_argument("--kind", default="text", choices=["text", "tool"],
                   help="text: actions are lines of text; tool: actions are tool calls with JSON arguments")
    s.set_defaults(fn=_cmd_new)

    s = sub.add_parser("play", help="run a scripted policy and print a JSON summary as the last line")
    s.add_argument("name")
    s.add_argument("--policy", default="expert", choices=["expert", "random"])
    s.add_argument("--split", default="test")
    s.add_argument("--limit", type=int, default=None)
    s.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of the environment's server (repeat)")
    s.add_argument("--server", action="append", default=None, help="URL of a running server (repeat for replicas)")
    s.add_argument("--concurrency", type=int, default=8)
    s.add_argument("--seed", type=int, default=None)
    s.add_argument("--token", default=os.environ.get("AGENTENV_TOKEN"))
    s.add_argument("--output", default=None, help="write every episode as JSON lines")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--screenshots", default=None, metavar="DIR",
                   help="save what the browser shows at every turn as DIR/SPLIT-TASK/TURN.png (browser environments)")
    s.set_defaults(fn=_cmd_play)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except (registry.UnknownEnvironment, ServerError, AgentEnvError, ValueError, FileExistsError) as e:
        print(f"agentenv: {e}", file=sys.stderr)
        return 2
