"""Does a server answer as AgentGym's own does? Replays scripted episodes on two AgentGym-protocol servers.

The check behind an environment's ``agentgym`` profile (:mod:`agentenv.profiles`): AgentGym's original server
(its repository's code, run by the user) and this project's server under ``--compat agentgym`` are reset to the
same upstream indices (AgentEval's items) and sent the same actions; every answer's observation, reward and
done must agree. The actions are scripted from the profile itself, by the item's index modulo 5: 0 plays 60
random actions (past any turn limit), 1 the expert from the start, 2 a reply in AgentGym's ``Thought: ...
Action: ...`` form and text that is no action before the expert, 3 and 4 six random actions before those; so
they reach walls, invalid actions, successes and failures, also where every action uses up a try (wordle).

``--record FILE`` keeps the upstream server's answers, so the comparison can be repeated without it
(``--replay FILE``): that is how the test suite checks a profile where the upstream server cannot be installed.
``--indices 0-59,9428-9487`` plays given upstream indices instead of the published items (where both servers
run on data of the user's that holds only some items, as sqlgym's on a BIRD-format export).

    python -m agentenv.interop.agentgym_compare maze --items AgentItemId --upstream http://127.0.0.1:36001 \\
        --record maze_upstream.json
    python -m agentenv.interop.agentgym_compare maze --replay maze_upstream.json   # against a fresh local server
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from agentenv import profiles, registry
from agentenv.env import Environment
from agentenv.interop import agentgym_items
from agentenv.interop.agentgym_routes import AgentGymRoutes, routes_of
from agentenv.server_process import ServerProcess

#: the fields of an answer that must agree (what AgentGym's clients read), where upstream's answer has them
FIELDS = ("observation", "reward", "score", "done")
PROBES = 6  # random moves before the scripted replies
LONG = 60  # most actions of an episode (the long random ones: every fifth item)


def profile_class(name: str) -> type[Environment]:
    native = registry.load(name)
    if "agentgym" not in native.profiles:
        raise SystemExit(f"{name} has no agentgym profile (profiles: {', '.join(profiles.available(native))})")
    return profiles.resolve(native, "agentgym")


def _instance(env_cls: type[Environment], options: dict[str, Any]) -> Environment:
    parsed = env_cls.Options(**options)
    env = env_cls()
    env.options, env.shared = parsed, env_cls.load_shared(parsed)
    return env


def script(env_cls: type[Environment], index: int, options: dict[str, Any] | None = None,
           split: str = "test") -> list[str]:
    """The actions played on upstream index ``index`` (a task of the profile's ``split``): decided on the
    profile (seeded by the index), so they are the same wherever they are replayed."""
    rng = random.Random(index)
    env = _instance(env_cls, options or {})
    env.reset(index, split)
    actions: list[str] = []
    routes = routes_of(env_cls)

    def play(action: str) -> bool:
        action = routes.client_action(action)  # as AgentGym's client sends it (the Toolusage servers' "Action: ")
        actions.append(action)
        return env.step(action).done

    kind = index % 5
    if kind == 0:  # a long random episode: past the turn limits (or to a lucky success)
        while len(actions) < LONG and not play(env.random_action(rng)):
            pass
        return actions
    if kind >= 3:  # a few random actions first (kind 1: the expert from the start; 2: no random actions)
        for _ in range(PROBES):
            if play(env.random_action(rng)):
                return actions
    # a whole reply: the Toolusage servers read the call only on the line that says "Action:" (their client's form)
    thought = "Thought: I will go on.\n\n" if routes.action_prefix else "Thought:\nI will go on.\n\nAction:\n"
    if kind >= 2 and (play(thought + routes.client_action(env.expert_action()))
                      or play("I am not sure what to do")):
        return actions
    while len(actions) < LONG and not play(env.expert_action()):
        pass
    return actions


def read_recording(path: str | Path) -> dict[str, Any]:
    """A recording written by ``--record`` (gzip-compressed when its name ends in ``.gz``)."""
    path = Path(path)
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return json.loads(data)


def write_recording(path: str | Path, recording: dict[str, Any]) -> None:
    path = Path(path)
    data = (json.dumps(recording, indent=1) + "\n").encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)


def _answer(body: Any, routes: AgentGymRoutes) -> dict[str, Any]:
    if isinstance(body, list):  # ("pair" reset answers)
        body = {"observation": body[0]}
    elif isinstance(body, str):
        body = {"observation": body}
    out = {k: body.get(k) for k in FIELDS if k in body}
    if routes.step_observation in body and routes.step_observation != "observation":
        out["observation"] = body[routes.step_observation]
    return out


def play_server(url: str, routes: AgentGymRoutes, index: int, actions: Sequence[str]) -> dict[str, Any]:
    """One episode on an AgentGym-protocol server: its reset's and steps' answers (the compared fields)."""
    p = url.rstrip("/") + routes.prefix.rstrip("/")
    with httpx.Client(timeout=60) as http:
        body = routes.create_json(index)
        created = http.post(p + "/create", **({"json": body} if body is not None else {})).json()
        handle = created["id"] if isinstance(created, dict) else int(created)
        reset = http.post(p + "/reset", json={routes.handle: handle, routes.reset_key: index,
                                             **routes.reset_extra}).json()
        steps = [_answer(http.post(p + "/step", json={routes.handle: handle, "action": a}).json(), routes)
                 for a in actions]
        if routes.has_close:
            http.post(p + "/close", json={routes.handle: handle})
    return {"index": index, "reset": {"observation": _answer(reset, routes).get("observation")},
            "actions": list(actions), "steps": steps}


def differences(expected: dict[str, Any], got: dict[str, Any], view: Any = None, key: Any = None) -> list[str]:
    """Where two plays of the same item disagree (empty: identical). ``view``: what of a first observation
    must agree, where upstream itself does not fix all of it (the profile's ``agentgym_task_view``); ``key``:
    what of any observation must agree, where the simulator itself varies (``agentgym_observation_key``)."""
    out = []
    where = f"item {expected['index']}"
    first = [expected["reset"].get("observation"), got["reset"].get("observation")]
    if all(isinstance(o, str) for o in first):
        first = [view(o) if view is not None else key(o) if key is not None else o for o in first]
    if first[0] != first[1]:
        out.append(f"{where} reset: {first[0]!r} != {first[1]!r}")
    for turn, (a, b) in enumerate(zip(expected["steps"], got["steps"], strict=True), 1):
        b = {k: b.get(k) for k in a}
        if key is not None and isinstance(a.get("observation"), str) and isinstance(b.get("observation"), str):
            a, b = {**a, "observation": key(a["observation"])}, {**b, "observation": key(b["observation"])}
        if a != b:
            out.append(f"{where} step {turn} ({expected['actions'][turn - 1]!r}): {a!r} != {b!r}")
    return out


def record(name: str, url: str, indices: Sequence[int], options: dict[str, Any] | None = None,
           split: str = "test") -> dict[str, Any]:
    """Upstream's answers to the scripted episodes; ``options``: the profile's options that match how the
    upstream server runs (kept in the recording: a replay starts this project's server with them)."""
    cls = profile_class(name)
    routes = routes_of(cls)
    return {"env": name, "profile_version": cls.version, "server": url, "options": dict(options or {}),
            "split": split, "items": [play_server(url, routes, i, script(cls, i, options, split)) for i in indices]}


def task_view(env_name: str, options: dict[str, Any]) -> Any:
    """The profile's view of a first observation (None: all of it must agree)."""
    cls = profile_class(env_name)
    hook = getattr(cls, "agentgym_task_view", None)
    if hook is None:
        return None
    env = _instance(cls, options)
    return lambda observation: hook(env, observation)


def compare(recording: dict[str, Any], url: str) -> list[str]:
    """Replays a recording's actions on ``url``; the differences."""
    cls = profile_class(recording["env"])
    routes = routes_of(cls)
    view = task_view(recording["env"], recording.get("options") or {})
    key = getattr(cls, "agentgym_observation_key", None)
    out: list[str] = []
    for item in recording["items"]:
        out += differences(item, play_server(url, routes, item["index"], item["actions"]), view, key)
    return out


def parse_indices(spec: str) -> list[int]:
    """``"0-2,9428"`` -> ``[0, 1, 2, 9428]`` (ranges inclusive)."""
    out: list[int] = []
    for part in filter(None, (s.strip() for s in spec.split(","))):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"--indices: {part!r} is not an index or a range A-B")
        out += range(int(first), int(last) + 1) if dash else [int(first)]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("env")
    p.add_argument("--upstream", help="URL of AgentGym's own server of the environment")
    p.add_argument("--ours", help="URL of this project's server under --compat agentgym (default: start one)")
    p.add_argument("--items", help="AgentItemId directory (default $AGENTGYM_ITEMS): the indices played")
    p.add_argument("--split", choices=("test", "train"), default="test",
                   help="AgentEval's items (test) or AgentTraj's (train)")
    p.add_argument("--indices", default=None, metavar="A-B,C,...",
                   help="play these upstream indices instead of the published items (e.g. 0-59,9428-9487: where the "
                        "upstream server runs on data of the user's that holds only some of them)")
    p.add_argument("--limit", type=int, default=None, help="play only the first N items")
    p.add_argument("--record", help="write the upstream server's answers to this file")
    p.add_argument("--replay", help="compare with a recording instead of a running upstream server")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of the profile matching how the upstream server runs (e.g. file_order=sorted)")
    args = p.parse_args(argv)
    options = dict(item.split("=", 1) for item in args.option)
    if args.replay:
        recording = read_recording(args.replay)
    else:
        if not args.upstream:
            p.error("give --upstream URL or --replay FILE")
        if args.indices:
            try:
                indices = parse_indices(args.indices)
            except ValueError as e:
                p.error(str(e))
        else:
            root = agentgym_items.items_root(args.items)
            if root is None:
                p.error("give --items DIR (AgentItemId) or set $AGENTGYM_ITEMS, or --indices")
            items = agentgym_items.load(root, routes_of(profile_class(args.env)).item_prefix or args.env)
            indices = items.test if args.split == "test" else items.train
        recording = record(args.env, args.upstream, indices[:args.limit], options, args.split)
        if args.record:
            write_recording(args.record, recording)
    recording["items"] = recording["items"][:args.limit]
    if args.ours:
        diffs = compare(recording, args.ours)
    else:
        # this project's server of the environment under --compat agentgym (its agentgym profile), on loopback
        with ServerProcess(args.env, extra_args=["--compat", "agentgym"],
                           options=recording.get("options") or None) as ours:
            diffs = compare(recording, ours.url)
    steps = sum(len(item["steps"]) for item in recording["items"])
    for line in diffs[:50]:
        print(line)
    print(f"{args.env}: {len(recording['items'])} items, {steps} steps, {len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
