"""``train_agentevol.sh``: behaviour cloning, then AgentEvol (AgentGym paper, sec. 4) on verl's SFT trainer.

    ./train_agentevol.sh --env_name maze[,wordle...] [--iterations M] [--model tiny|PATH] [--output_dir DIR]
                         [--server NAME=URL ...] [key=value ...]

Iteration 0 (behaviour cloning): the environments' experts play train tasks ``0..data.bc_tasks-1``; the
successful episodes (AgentTraj, ``openmanus_rl.expert_data``) are the initial data; the base model is
fine-tuned on them with ``verl.trainer.sft_trainer`` (``openmanus_rl.sft``). Iteration k >= 1:

1. explore: the model of iteration k-1 samples ``explore.samples_per_instruction`` trajectories per
   instruction of train tasks ``S..S+data.explore_tasks-1`` (a wider set than BC's; one count for all or per
   environment, as the paper's instruction sets differ per environment; ``S`` is ``data.explore_start``,
   default 0, which past BC's tasks explores only instructions the expert episodes do not hold; with
   ``data.explore_fresh`` each iteration takes the block after the previous iteration's instead) at
   ``explore.temperature``, with the training prompts and action parser. ``explore.backend: verl``
   (default) runs verl's ``main_ppo`` in validation-only mode (``trainer.val_only``,
   ``rollout.val_kwargs``) with the OpenManus agent loop and verl's rollout replicas (the PPO path;
   vLLM/SGLang on GPUs) and collects the loop's AgentTraj rollout log; ``explore.backend: hf`` uses the
   evaluator's episode runner (batched generation reusing each episode's keys and values, no Ray). Both
   seed every episode and turn from (seed, task, draw), so reruns repeat exactly;
2. filter: keeps the trajectories whose reward reaches the environment's ``success_threshold`` and whose
   ``success`` is true (a shaping reward can lift a failure over the threshold);
3. fine-tune on initial data + this iteration's successes (``merge.data: current``; ``accumulate`` keeps
   every iteration's), continuing the previous model for ``sft.iteration_epochs`` passes (``merge.init:
   previous``, the default: minutes on a CPU), starting again from BC's model (``merge.init: bc``) or, as in
   the paper, from the base model (``merge.init: base``
   with ``sft.iteration_epochs: null``: the BC budget ``sft.epochs``);
4. evaluate: greedy decoding on each environment's test split (``agentenv-eval``'s code).

With ``dpo.enabled`` (learning from failures, the paper's Table 6) an iteration also pairs each explored failure
with a success of its task and runs DPO on the pairs after step 3 (``openmanus_rl.dpo``). ``max_turns`` caps
exploration and evaluation episodes (AgentGym's ``max_round``).

Layout of ``DIR``: ``base_model/`` (tiny model), ``expert/<env>.jsonl``, ``untrained/eval.json``,
``iter_<k>/{explore,filtered,pairs}/<env>.jsonl``, ``iter_<k>/sft_data.parquet``, ``iter_<k>/checkpoint/`` (verl
layout; ``checkpoint/global_step_N/huggingface`` is the transformers model; DPO's in ``iter_<k>/dpo_checkpoint/``),
``iter_<k>/eval.json``
(per-environment success rate and average reward), ``iter_<k>/eval_trajectories.jsonl``,
``summary.json``, ``table.txt``, ``success_rate.png``, ``timings.txt`` (wall time per stage; each
directory's ``timings.json`` holds its sub-steps' seconds), ``machines.jsonl`` (the machine of every start).

Resuming: every sub-step writes its outputs under temporary names, renames them into place and then
writes its marker ``<dir>/.done/<step>``; a re-run with the same ``--output_dir`` skips every marked
sub-step and redoes an unmarked one from scratch, so an interrupted run loses at most the sub-step
that was running. Sub-steps are deterministic for a fixed ``seed``.
"""

from openmanus_rl.agentevol.config import load_config, parse_args
from openmanus_rl.agentevol.explore import explore, explore_verl, filter_successes, sample_seed
from openmanus_rl.agentevol.loop import base_model, evaluate_model, finetune, main, run
from openmanus_rl.agentevol.report import report

__all__ = ["base_model", "evaluate_model", "explore", "explore_verl", "filter_successes", "finetune", "load_config",
           "main", "parse_args", "report", "run", "sample_seed"]
