"""Per-episode metrics of every training step, per environment, in verl's own logger.

verl 0.9.1's v1 trainer logs batch-level metrics during training and the agent loop's
``reward_extra_info`` only at validation. This trainer mode ("openmanus_sync", verl's
synchronous trainer plus what follows) adds, for each step and environment (``data_source``),
``episode/<env>/<key>`` means of what the OpenManus agent loop records per episode
(success, env_reward, env_score, turns, invalid_actions, format_errors, env_seconds,
gen_seconds) and ``episode/<env>/count``. It computes the ``gigpo`` advantage, which needs the
agent loop's turns (``openmanus_rl.advantages``), and with ``algorithm.reward_per_turn`` (PPO's default)
it puts each turn's reward on that turn (``openmanus_rl.rewards``) before any advantage. It also keeps
``trainer.time_budget_minutes`` (``train_ppo.sh --minutes``, openmanus_rl/time_budget.py): when one
more step would not fit, the next step is made verl's last.

Selected by ``trainer.v1.trainer_mode=openmanus_sync``; registered in every Ray worker by the
setup hook ``openmanus_rl.worker_setup.setup`` (both set in configs/ppo.yaml).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

TRAINER_MODE = "openmanus_sync"


def per_environment(sources: list[str], infos: list[dict[str, Any]]) -> dict[str, float]:
    """``episode/<env>/<key>`` means (and counts) of the episodes' numeric infos."""
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, int] = defaultdict(int)
    for source, info in zip(sources, infos, strict=True):
        counts[source] += 1
        for key, value in (info or {}).items():
            if isinstance(value, (int, float)):
                sums[source][key] += float(value)
    out: dict[str, float] = {}
    for source, n in counts.items():
        out[f"episode/{source}/count"] = float(n)
        for key, total in sums[source].items():
            out[f"episode/{source}/{key}"] = total / n
    return out


def as_list(values: Any) -> list[Any]:
    """Non-tensor fields come back from TransferQueue as numpy arrays or plain lists."""
    return values.tolist() if hasattr(values, "tolist") else list(values)


def register() -> None:
    """Ray worker setup hook: make the trainer mode known in this process."""
    import transfer_queue as tq
    from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY, register_trainer
    from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

    if TRAINER_MODE in TRAINER_REGISTRY:
        return

    from openmanus_rl import advantages, rewards
    from openmanus_rl.time_budget import TimeBudget

    @register_trainer(TRAINER_MODE)
    class OpenManusTrainer(PPOTrainerSync):
        def on_init_end(self):
            super().on_init_end()
            minutes = self.config.trainer.get("time_budget_minutes")
            self._budget = TimeBudget(60.0 * float(minutes)) if minutes else None

        def on_train_begin(self):
            super().on_train_begin()
            if self._budget is not None:
                self._budget.begin_training(self.global_steps)

        def _compute_advantage(self, batch, metrics):
            if self.config.algorithm.get("reward_per_turn", False):
                rewards.place_per_turn_in_transfer_queue(batch, metrics)
            # gigpo needs each episode's turns, which verl's estimator interface does not pass
            if self.config.algorithm.adv_estimator == advantages.GIGPO:
                return advantages.compute_in_transfer_queue(batch, self.config, metrics)
            return super()._compute_advantage(batch, metrics)

        # _compute_metrics is verl 0.9.1's per-step metrics hook (trainer_base.py:1868): the batch is
        # still in TransferQueue there, so the agent loop's per-episode fields can be read back.
        def _compute_metrics(self, batch, metrics, timing_raw, global_steps, epoch):
            super()._compute_metrics(batch, metrics, timing_raw, global_steps, epoch)
            data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id,
                                   select_fields=["data_source", "extra_fields"])
            keep = [not tag.get("is_padding", False) for tag in batch.tags]
            sources = [str(s) for s, k in zip(as_list(data["data_source"]), keep, strict=True) if k]
            extras = [e for e, k in zip(as_list(data["extra_fields"]), keep, strict=True) if k]
            infos = [e.get("reward_extra_info", {}) if isinstance(e, dict) else {} for e in extras]
            metrics.update(per_environment(sources, infos))
            if (self._budget is not None and global_steps < self.total_training_steps
                    and self._budget.next_is_last(global_steps)):
                # fit() reads this at the top of the next step: that step saves and validates as the last
                self.total_training_steps = global_steps + 1
                print(f"time budget: step {global_steps + 1} is the last", flush=True)
