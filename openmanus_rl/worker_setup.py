"""The Ray worker setup hook of verl runs: what each of verl's processes must know of this project.

verl resolves trainer modes and advantage estimators by name in whichever process uses them, so both
registries are filled in every worker (``ray_kwargs.ray_init.runtime_env.worker_process_setup_hook``,
set in configs/ppo.yaml).
"""

from __future__ import annotations


def setup() -> None:
    from openmanus_rl import advantages, trainer

    trainer.register()
    advantages.register()
