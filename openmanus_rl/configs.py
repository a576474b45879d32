"""Where the configs live and how a launcher's experiment is composed from them.

``configs/`` holds hydra config groups, as verl's own trainer config does: ``machine/`` (verl on this hardware:
``cpu``, ``gpu``, and ``cpu_sft`` / ``gpu_sft`` for the SFT trainer), ``model/`` (a model's weights and the
settings that fit it) and ``algo/`` (``grpo``, ``ppo``), and the experiments that choose among them in their
``defaults:`` list (``ppo.yaml`` for train_ppo.sh, ``agentevol.yaml`` for train_agentevol.sh). Every group file
is ``# @package _global_``: each adds to the experiment's own keys (``agent:``, ``verl:``, ``model:``), and
hydra merges them in the order of the defaults list, then the command line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

INSTALLED_CONFIGS = Path("share") / "openmanus_rl" / "configs"  # where setup.py's data_files put configs/
GROUPS = ("machine", "model", "algo")


def config_dir() -> Path:
    """The configs directory: ``$OPENMANUS_CONFIG_DIR``, else the source checkout's ``configs/`` (an editable
    install), else the copy a regular install put under ``<prefix>/share/openmanus_rl/configs``."""
    env = os.environ.get("OPENMANUS_CONFIG_DIR")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[1] / "configs"
    if checkout.is_dir():
        return checkout
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        if (Path(prefix) / INSTALLED_CONFIGS).is_dir():
            return Path(prefix) / INSTALLED_CONFIGS
    raise FileNotFoundError(f"no configs directory: not in a source checkout, none under {sys.prefix}/"
                            f"{INSTALLED_CONFIGS}; set OPENMANUS_CONFIG_DIR")


def options(group: str) -> list[str]:
    """The choices of a config group (the file names in ``configs/<group>/``)."""
    return sorted(p.stem for p in (config_dir() / group).glob("*.yaml"))


class ConfigError(ValueError):
    """An experiment that does not compose: an unknown group option, a key hydra cannot set."""


def compose(experiment: str | Path, overrides: Sequence[str] = ()) -> DictConfig:
    """An experiment composed by hydra: its defaults list, then ``overrides`` (hydra's grammar, e.g.
    ``model=qwen2.5-7b``, ``agent.max_turns=5``). ``experiment`` is a file name of ``configs/`` (``ppo.yaml``) or
    a path to one of the user's own (it may choose from the groups of ``configs/``, which stay on the search
    path)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    path = Path(experiment)
    if not path.is_absolute() and len(path.parts) == 1:
        path = config_dir() / path
    if not path.is_file():
        raise ConfigError(f"no experiment config {path}")
    search = [] if path.parent.resolve() == config_dir().resolve() else [f"hydra.searchpath=[file://{config_dir()}]"]
    try:
        with initialize_config_dir(config_dir=str(path.parent.resolve()), version_base=None):
            return hydra_compose(config_name=path.stem, overrides=[*search, *overrides])
    except (HydraException, OmegaConfBaseException) as e:
        raise ConfigError(str(e).strip().splitlines()[0]) from None


def parse_value(key: str, text: str) -> Any:
    """The value ``key=text`` sets in hydra's grammar (``{maze: 15, default: 20}``, ``[1, 2]``, ``null``, ``3e-4``)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        override = OverridesParser.create().parse_override(f"{key}={text}")
    except HydraException as e:
        raise ConfigError(str(e).strip().splitlines()[0]) from None
    if override.is_sweep_override():  # a launcher runs one experiment: a,b would be hydra's sweep of two
        raise ConfigError(f"{key}={text} is a sweep in hydra's grammar; a list is [a, b], a string with a comma "
                          "is quoted: 'a,b'")
    return override.value()
