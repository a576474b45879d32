"""How verl finds the OpenManus agent loop, declared without importing verl (launchers stay light).

A dataset row names the loop (``agent_name``); verl's agent-loop YAML maps that name to the class; the
loop's settings (servers, turn limits, rollout log) are a YAML file named by ``$OPENMANUS_AGENT_CONFIG``
in every rollout worker. Launchers write both files with :func:`write_agent_loop_files`; the loop
(``agent_loop.py``) reads the settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

AGENT_NAME = "openmanus"
CONFIG_VAR = "OPENMANUS_AGENT_CONFIG"  # path of the settings YAML
LOOP_CLASS = "openmanus_rl.agent_loop.OpenManusAgentLoop"


def write_agent_loop_files(directory: Path, settings: dict[str, Any]) -> tuple[Path, Path]:
    """verl's registration (``actor_rollout_ref.rollout.agent.agent_loop_config_path``) and the loop's
    settings file (its path goes to the workers as ``$OPENMANUS_AGENT_CONFIG``)."""
    registration = directory / "agent_loop.yaml"
    OmegaConf.save(OmegaConf.create([{"name": AGENT_NAME, "_target_": LOOP_CLASS}]), registration)
    path = directory / "agent_settings.yaml"
    OmegaConf.save(OmegaConf.create(settings), path)
    return registration, path
