"""Moved: machine presets and their rendering are :mod:`openmanus_rl.verl_args`, the configs directory
:mod:`openmanus_rl.configs` (this alias stays for a release)."""

from openmanus_rl.configs import config_dir
from openmanus_rl.verl_args import (
    PRESETS,
    attention_settings,
    default_preset,
    flash_attention_installed,
    format_value,
    load_preset,
    verl_overrides,
)

__all__ = ["PRESETS", "attention_settings", "config_dir", "default_preset", "flash_attention_installed",
           "format_value", "load_preset", "verl_overrides"]
