"""How verl finds the OpenManus agent loop, declared without importing verl (launchers stay light).

A dataset row names the loop (``agent_name``); verl's agent-loop YAML maps that name to the class; the
loop's settings (servers, turn limits, rollout log) are a YAML file named by ``$OPENMANUS_AGENT_CONFIG``
in every rollout worker. Launchers write both files with :func:`write_agent_loop_files`; the loop
(``agent_loop.py``) reads the settings.

On a Ray cluster someone else started (``ray start``), rollout workers on other nodes neither inherit the
launcher's environment nor see its files: there the settings themselves travel in the job's Ray runtime
environment as ``$OPENMANUS_AGENT_SETTINGS`` (:func:`settings_vars`, put there by
``openmanus_rl.cluster.join_cluster``), which the loop reads in preference to the path.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

AGENT_NAME = "openmanus"
CONFIG_VAR = "OPENMANUS_AGENT_CONFIG"  # path of the settings YAML
SETTINGS_VAR = "OPENMANUS_AGENT_SETTINGS"  # the settings themselves (encode_settings): wins over CONFIG_VAR
LOOP_CLASS = "openmanus_rl.agent_loop.OpenManusAgentLoop"


def write_agent_loop_files(directory: Path, settings: dict[str, Any]) -> tuple[Path, Path]:
    """verl's registration (``actor_rollout_ref.rollout.agent.agent_loop_config_path``) and the loop's
    settings file (its path goes to the workers as ``$OPENMANUS_AGENT_CONFIG``)."""
    registration = directory / "agent_loop.yaml"
    OmegaConf.save(OmegaConf.create([{"name": AGENT_NAME, "_target_": LOOP_CLASS}]), registration)
    path = directory / "agent_settings.yaml"
    OmegaConf.save(OmegaConf.create(settings), path)
    return registration, path


def encode_settings(settings: dict[str, Any]) -> str:
    """The settings as one token: base64url of their JSON. Plain JSON would not survive the way to the
    workers (a hydra override of verl's ``ray_kwargs.ray_init.runtime_env``: braces, commas and ``${``
    mean something there); this alphabet means nothing to hydra, OmegaConf or a shell."""
    return base64.urlsafe_b64encode(json.dumps(settings, separators=(",", ":")).encode()).decode()


def decode_settings(text: str) -> dict[str, Any]:
    """:func:`encode_settings`'s inverse; plain JSON (``{...}``, e.g. set by hand) is taken as it is."""
    text = text.strip()
    raw = text if text.startswith("{") else base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    settings = json.loads(raw)
    if not isinstance(settings, dict):
        raise ValueError(f"${SETTINGS_VAR} does not hold a mapping of settings: {raw[:200]!r}")
    return settings


def settings_vars(path: str | Path) -> dict[str, str]:
    """What a rollout worker on any node needs to find the settings written at ``path``: the path, and
    the settings themselves (read now, on the launcher's machine)."""
    settings = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    if not isinstance(settings, dict):
        raise ValueError(f"{path}: the agent loop's settings are not a mapping")
    return {CONFIG_VAR: str(path), SETTINGS_VAR: encode_settings(settings)}
