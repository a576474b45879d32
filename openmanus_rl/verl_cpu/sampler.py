"""verl's replay buffer with a short TransferQueue poll interval (selected by the CPU preset).

verl 0.9.1's v1 trainer waits for rollouts by polling TransferQueue every 2 s
(verl/trainer/ppo/v1/replay_buffer.py: ``poll_interval=2.0``, not exposed in the config), so a step can
never take less than ~2 s even when a tiny model generates in 0.2 s. verl's public
``trainer.v1.sampler.custom_sampler`` hook lets us pass a shorter interval::

    trainer.v1.sampler.custom_sampler.path=pkg://openmanus_rl.verl_cpu.sampler
    trainer.v1.sampler.custom_sampler.name=fast_poll_replay_buffer
    +trainer.v1.sampler.sampler_kwargs.poll_interval=0.05

Behaviour is otherwise verl's own ``ReplayBuffer`` (sync) / ``ReplayBufferAsync``. Caveat: verl passes
custom samplers only the base constructor arguments, so DAPO group filtering (``algorithm.filter_groups``)
is not available with it; drop these three overrides when using DAPO.
"""

from __future__ import annotations

from typing import Any

from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer, ReplayBufferAsync

DEFAULT_POLL_INTERVAL = 0.05


def fast_poll_replay_buffer(trainer_mode: str, sampler_kwargs: Any = None, **kwargs: Any) -> ReplayBuffer:
    """Build verl's replay buffer for ``trainer_mode`` with ``sampler_kwargs.poll_interval`` (default 0.05 s)."""
    sk = dict(sampler_kwargs or {})
    poll_interval = float(sk.get("poll_interval", DEFAULT_POLL_INTERVAL))
    cls = ReplayBuffer if trainer_mode == "sync" else ReplayBufferAsync
    return cls(trainer_mode=trainer_mode, sampler_kwargs=sampler_kwargs, poll_interval=poll_interval, **kwargs)
