"""The trainer mode ``openmanus_sync``: verl's synchronous PPO trainer plus what agent episodes need.

verl 0.9.1's v1 trainer knows nothing of episodes and turns. This subclass, registered with verl's
public ``register_trainer`` and selected by ``trainer.v1.trainer_mode=openmanus_sync`` (configs/ppo.yaml):

* puts each turn's reward on that turn before any advantage, with ``algorithm.reward_per_turn`` (PPO's
  default; :func:`openmanus_rl.rewards.per_turn`);
* computes the ``gigpo`` advantage, which needs each episode's turns that verl's estimator interface does
  not pass (:func:`openmanus_rl.advantages.gigpo_advantages`);
* logs ``episode/<env>/<key>`` means of what the agent loop records per episode, for every training step
  (:func:`openmanus_rl.episode_metrics.per_environment`; verl logs them only at validation);
* keeps ``trainer.time_budget_minutes`` (``train_ppo.sh --minutes``): when one more step would not fit,
  the next step becomes verl's last (:mod:`openmanus_rl.time_budget`).

Registered in every Ray worker that imports verl's trainers (the setup hook ``openmanus_rl.worker_setup.setup``).
"""

from __future__ import annotations

from typing import Any

TRAINER_MODE = "openmanus_sync"


def place_rewards_per_turn(batch: Any, metrics: dict) -> None:
    """Rewrite the batch's ``rm_scores`` with :func:`~openmanus_rl.rewards.per_turn` for every episode whose
    training reward is its environment reward summed (style ``env_reward``); under another style
    (``success``) the turns' rewards are not what is trained on, and the episode's reward stays on its
    last token."""
    import torch

    from openmanus_rl import transfer_queue
    from openmanus_rl.rewards import per_turn

    got = transfer_queue.get_responses(batch, "extra_fields")
    placed = got.scores.clone()
    spread = 0
    for i, extra in enumerate(transfer_queue.as_list(got.fields["extra_fields"])):
        extra = extra or {}
        total = float(got.scores[i].sum())
        env_reward = (extra.get("reward_extra_info") or {}).get("env_reward")
        if "turn_spans" not in extra or env_reward is None or abs(total - float(env_reward)) > 1e-6:
            continue
        n = int(got.lengths[i])
        row = per_turn(total, got.mask[i, :n].tolist(), extra["turn_spans"], extra["turn_rewards"])
        placed[i] = 0.0
        placed[i, :n] = torch.tensor(row, dtype=placed.dtype)
        spread += 1
    metrics["reward/per_turn_share"] = spread / max(len(got.lengths), 1)
    metrics["reward/rewarded_tokens_mean"] = float((placed != 0).sum()) / max(len(got.lengths), 1)
    transfer_queue.put_responses(batch, got, rm_scores=placed)


def gigpo_advantage(batch: Any, config: Any, metrics: dict) -> Any:
    """GiGPO's advantages (and returns) for the batch: outcomes, groups, masks and the agent loop's turns
    read from TransferQueue, advantages written back."""
    import torch

    from openmanus_rl import transfer_queue
    from openmanus_rl.advantages import gigpo_advantages

    if config.algorithm.get("use_kl_in_reward", False):
        raise ValueError("algorithm.adv_estimator=gigpo does not take algorithm.use_kl_in_reward "
                         "(use actor_rollout_ref.actor.use_kl_loss)")
    got = transfer_queue.get_responses(batch, "uid", "extra_fields")
    extras = transfer_queue.as_list(got.fields["extra_fields"])
    uids = [str(u) for u in transfer_queue.as_list(got.fields["uid"])]
    padding = transfer_queue.padding_rows(batch)
    # padding rows (copies that fill a batch) join no group and get no advantage
    groups = [f"padding-{i}" if pad else uid for i, (uid, pad) in enumerate(zip(uids, padding, strict=True))]
    if any("turn_spans" not in (e or {}) for e in extras):
        raise ValueError("algorithm.adv_estimator=gigpo needs the turns the OpenManus agent loop records "
                         "(extra_fields turn_spans / turn_states); another agent loop made this batch")
    algo = config.algorithm
    advantages, found = gigpo_advantages(
        got.scores.sum(-1).tolist(), groups, [e["turn_spans"] for e in extras], [e["turn_states"] for e in extras],
        got.mask.float(), gamma=float(algo.get("gigpo_gamma", 0.95)),
        step_weight=float(algo.get("gigpo_step_weight", 1.0)),
        turn_rewards=[e["turn_rewards"] for e in extras] if all("turn_rewards" in e for e in extras) else None)
    advantages[torch.tensor(padding, dtype=torch.bool)] = 0.0
    metrics.update(found)
    return transfer_queue.put_responses(batch, got, advantages=advantages, returns=advantages.clone())


def episode_metrics(batch: Any) -> dict[str, float]:
    """``episode/<env>/<key>`` of the batch's real (not padding) episodes, from what the agent loop recorded."""
    from openmanus_rl import transfer_queue
    from openmanus_rl.episode_metrics import per_environment

    data = transfer_queue.get(batch, ["data_source", "extra_fields"])
    keep = [not pad for pad in transfer_queue.padding_rows(batch)]
    sources = [str(s) for s, k in zip(transfer_queue.as_list(data["data_source"]), keep, strict=True) if k]
    extras = [e for e, k in zip(transfer_queue.as_list(data["extra_fields"]), keep, strict=True) if k]
    return per_environment(sources, [e.get("reward_extra_info", {}) if isinstance(e, dict) else {} for e in extras])


def register() -> None:
    """Ray worker setup hook: make the trainer mode known in this process (idempotent)."""
    from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY, register_trainer
    from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

    if TRAINER_MODE in TRAINER_REGISTRY:
        return

    from openmanus_rl.advantages import GIGPO
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
                place_rewards_per_turn(batch, metrics)
            if self.config.algorithm.adv_estimator == GIGPO:
                return gigpo_advantage(batch, self.config, metrics)
            return super()._compute_advantage(batch, metrics)

        # _compute_metrics is verl 0.9.1's per-step metrics hook (trainer_base.py:1868): the batch is
        # still in TransferQueue there, so the agent loop's per-episode fields can be read back.
        def _compute_metrics(self, batch, metrics, timing_raw, global_steps, epoch):
            super()._compute_metrics(batch, metrics, timing_raw, global_steps, epoch)
            metrics.update(episode_metrics(batch))
            if (self._budget is not None and global_steps < self.total_training_steps
                    and self._budget.next_is_last(global_steps)):
                # fit() reads this at the top of the next step: that step saves and validates as the last
                self.total_training_steps = global_steps + 1
                print(f"time budget: step {global_steps + 1} is the last", flush=True)
