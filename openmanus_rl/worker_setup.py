"""The Ray worker setup hook of verl runs: what each of verl's processes must know of this project.

verl resolves trainer modes and advantage estimators by name in whichever process uses them, so every
worker (``ray_kwargs.ray_init.runtime_env.worker_process_setup_hook``, set in configs/ppo.yaml) registers
them when it imports verl's registry of each: a worker that never does (TransferQueue's storage, the load
balancer, a prestarted worker that stays idle) does not import verl for them. Importing verl eagerly here cost
a one-step CPU run 20-40 s of its ~125 (measured: 127 and 128 s eager, 108 and 89 s on import).
"""

from __future__ import annotations

from openmanus_rl.post_import import when_imported


def _register_trainer(_module) -> None:
    from openmanus_rl import trainer

    trainer.register()


def _register_estimators(_module) -> None:
    from openmanus_rl import advantages

    advantages.register()


def setup() -> None:
    # the package, not trainer_base: its __init__ imports trainer_sync, whose class the trainer mode extends
    when_imported("verl.trainer.ppo.v1", _register_trainer)
    when_imported("verl.trainer.ppo.core_algos", _register_estimators)
