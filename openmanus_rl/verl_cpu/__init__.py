"""verl plugin that lets verl 0.9.1's unmodified trainer run on CPU-only machines.

Loaded automatically by ``import verl`` (entry point group ``verl.plugins``, see setup.py: the module
:mod:`.plugin`), in the driver and in every Ray worker. On import it:

* registers the ``cpu`` platform (:mod:`.platform`) - chosen by verl's auto-detection only when no
  accelerator is present (or with ``VERL_PLATFORM=cpu``);
* registers the ``hf`` rollout backend (:mod:`.rollout`), selected with ``actor_rollout_ref.rollout.name=hf``;
* when the cpu platform is the active one, registers verl's FSDP engines for device "cpu" (public
  ``EngineRegistry.register``), installs the two unavoidable monkeypatches (:mod:`.patches`)
  and limits torch to ``OPENMANUS_VERL_CPU_THREADS`` threads per process (default 1: on small hosts
  several verl processes share the cores and intra-op threading makes tiny models much slower).

On a machine with CUDA nothing changes besides one more (unused) platform and rollout name.

Launchers render machine presets with :func:`openmanus_rl.verl_args.verl_overrides` (re-exported here).
"""

from openmanus_rl.configs import config_dir
from openmanus_rl.verl_args import default_preset, load_preset, verl_overrides

ROLLOUT_NAME = "hf"  # actor_rollout_ref.rollout.name of the transformers rollout (:mod:`.rollout`)

__all__ = ["ROLLOUT_NAME", "config_dir", "default_preset", "load_preset", "verl_overrides"]
