"""What the launchers (``train_ppo.sh``, ``train_agentevol.sh``) share: their common flags, how a
``key=value`` names an experiment setting, a user's mistake as one line, and running verl itself.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from agentenv import registry
from agentenv.addresses import ServerError
from openmanus_rl import configs, run_summary


def launcher_parser(prog: str, description: str, config_name: str) -> argparse.ArgumentParser:
    """The flags every launcher (train_ppo.sh, train_agentevol.sh) shares."""
    p = argparse.ArgumentParser(prog=prog, description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env_name", "--env-name")
    p.add_argument("--model", help="tiny, a preset in configs/model/, a local path or a hub name")
    p.add_argument("--output_dir", "--output-dir")
    p.add_argument("--preset", help="auto | cpu | gpu")
    p.add_argument("--server", action="append", default=[], help="NAME=URL of a running environment server")
    p.add_argument("--config", default=None, help=f"experiment YAML (default: configs/{config_name})")
    return p


def parse_launcher_args(p: argparse.ArgumentParser, argv: Sequence[str] | None,
                        what: str = "settings") -> tuple[argparse.Namespace, list[str]]:
    """Flags, plus the ``key=value`` settings that follow them; anything else is an error."""
    args, rest = p.parse_known_args(argv)
    bad = [a for a in rest if "=" not in a or a.startswith("-")]
    if bad:
        p.error(f"unrecognized arguments: {' '.join(bad)} ({what} are passed as key=value)")
    return args, rest


#: experiment mappings whose entries the file does not list (env_options.NAME.KEY, data.expert_files.NAME), where
#: the experiment file has them
OPEN_MAPPINGS = ("env_options", "data.expert_files")


def is_setting(cfg: DictConfig, key: str) -> bool:
    """Whether ``key`` names a setting of the experiment file (else it is passed on to verl)."""
    if any(key.startswith(m + ".") and OmegaConf.select(cfg, m, default=None) is not None for m in OPEN_MAPPINGS):
        return True
    return OmegaConf.select(cfg, key, default=KeyError) is not KeyError


def refuse_entry_under_one_value(prog: str, cfg: DictConfig, key: str, value: str) -> None:
    """Exit on ``KEY.ENV=VALUE`` where the run's ``KEY`` holds one value, not a mapping (``agent.max_turns.maze=7``
    with one turn limit for all), naming the whole mapping to give instead."""
    parts = key.split(".")
    for n in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:n])
        current = OmegaConf.select(cfg, parent, default=KeyError)
        if current is KeyError:
            continue
        if not OmegaConf.is_config(current):  # null too (max_train_tasks: null, every task): one value for all
            default = "null" if current is None else current
            raise SystemExit(f"{prog}: {key}: {parent} is one value in this run, not one per environment; give all "
                             f"of it, e.g. {parent}={{{parts[n]}: {value}, default: {default}}}")
        return


def set_setting(cfg: DictConfig, key: str, value: Any) -> None:
    """A ``key=value`` of the command line over the composed experiment, alike in every launcher: a whole mapping
    replaces the preset's (a merge would keep entries the command line left out, e.g. a preset's ``{maze: 15}``
    under ``agent.max_turns={default: 5}``); one entry is ``KEY.ENV=VALUE``."""
    OmegaConf.update(cfg, key, value, merge=False)


def parse_setting(prog: str, key: str, value: str) -> Any:
    """A command line's value as every launcher reads it: hydra's grammar (YAML 1.1 would read ``1e-5`` as a
    string), a value hydra cannot read or a sweep (``a,b``) exiting with the launcher's name."""
    try:
        return configs.parse_value(key, value)
    except configs.ConfigError as e:
        raise SystemExit(f"{prog}: {e}") from None


def apply_setting(prog: str, cfg: DictConfig, key: str, value: str) -> bool:
    """Set ``key=value`` of the command line over the experiment if ``key`` is one of its settings; False (nothing
    set) for a key the launcher passes on or refuses."""
    refuse_entry_under_one_value(prog, cfg, key, value)
    if not is_setting(cfg, key):
        return False
    set_setting(cfg, key, parse_setting(prog, key, value))
    return True


def env_options(cfg: DictConfig) -> dict[str, dict[str, Any]]:
    """Server options per environment (``env_options.NAME.KEY=VALUE``), e.g. a path to real upstream data."""
    given = cfg.get("env_options")
    return {str(k): dict(v) for k, v in (OmegaConf.to_container(given) if given is not None else {}).items()}


def clear_errors(prog: str, fn: Callable[[], Any]) -> int:
    """Run a launcher; a user's mistake (an environment that is not installed, a server that is down
    or serves another environment, a bad option) is one line and exit status 2, not a traceback."""
    try:
        result = fn()
    except (registry.UnknownEnvironment, ServerError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    return result if isinstance(result, int) else 0


class _Terminated(BaseException):
    """SIGTERM while verl runs."""


def _interrupt(signum, frame) -> None:
    raise _Terminated


def run_verl(cmd: list[str], out: Path, extra_env: dict[str, str]) -> int:
    """Run verl in its own process group (so Ray's workers go with it), echo its output, and print
    a per-environment line for every finished step."""
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1", **extra_env)
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    watcher = run_summary.StepWatcher(out / "rollouts")
    stop = threading.Event()
    thread = threading.Thread(target=watcher.follow, args=(stop,), daemon=True)
    thread.start()
    # SIGTERM (kill, a scheduler's stop) would end this process without the cleanup below and leave
    # verl's trainer and its Ray workers running in their own session: make it an interrupt like Ctrl-C
    on_term = signal.getsignal(signal.SIGTERM)
    on_main = threading.current_thread() is threading.main_thread()  # only the main thread may set handlers
    if on_main:
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        code = proc.wait()
    except _Terminated:
        code = 128 + signal.SIGTERM
    except KeyboardInterrupt:
        code = 130
    finally:
        if on_main:
            signal.signal(signal.SIGTERM, on_term)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        stop.set()
        thread.join(5)
        watcher.flush()
    return code
