"""Every model preset's verl command, as ``train_ppo.sh --dry_run`` prints it, passes verl 0.9.1's own checks.

The command is composed with hydra against verl's ``ppo_trainer`` config (what ``main_ppo`` does), then
checked by verl's ``validate_config`` (batch sizes against the world size, micro-batches, the actor's and
critic's dataclass validation), converted to verl's rollout and algorithm dataclasses, and its rollout
parallelism handed to verl's ``RolloutReplica`` constructor for the run's GPU count. GPUs cannot exist here:
the GPU presets are checked as configuration, with the GPU count given on the command line. The model
config itself (``HFModelConfig``) is built from the weights, which a hub model cannot be fetched for here.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from openmanus_rl import budgets, capacity, train
from openmanus_rl.model_presets import model_preset, preset_names

VERL_CONFIG = Path(__import__("verl").__file__).parent / "trainer" / "config"

# (model, machine preset, GPUs per node, nodes): each preset on the hardware its file names
CASES = [
    ("tiny", "cpu", 1, 1),
    ("BC_CHECKPOINT --model_preset tiny-bc", "cpu", 1, 1),
    ("BC_CHECKPOINT --model_preset tiny-agent", "cpu", 1, 1),
    ("Qwen/Qwen2.5-0.5B-Instruct", "gpu", 1, 1),
    ("Qwen/Qwen2.5-1.5B-Instruct", "gpu", 2, 1),
    ("Qwen/Qwen2.5-7B-Instruct", "gpu", 8, 1),
    ("Qwen/Qwen2.5-7B-Instruct", "gpu", 8, 2),
    ("some-org/a-model-without-a-preset", "gpu", 4, 1),
]


def dry_run(*argv: str) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert train.main([*argv, "--dry_run"]) == 0
    line = out.getvalue().strip().splitlines()[-1]
    words = line.split(" ")
    assert words[1:3] == ["-m", "verl.trainer.main_ppo"], line
    return words[3:]


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory) -> str:
    """A tiny Qwen2 built in code: verl builds the critic's model config from weights, and a hub model
    cannot be fetched here (the tiny preset's own model is built only when a run starts)."""
    from openmanus_rl.tiny_model import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("stand_in") / "model", corpus=["move up"]))


def with_weights(overrides: list[str], path: str) -> list[str]:
    keys = ("actor_rollout_ref.model.path=", "critic.model.path=")
    return [o.split("=", 1)[0] + "=" + path if o.startswith(keys) else o for o in overrides]


def compose(overrides: list[str]):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(VERL_CONFIG), version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=[o for o in overrides if not o.startswith("hydra.")])


def verl_checks(cfg) -> None:
    """What verl runs on the config before it starts anything, and the rollout's world-size rule."""
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config
    from verl.workers.config import RolloutConfig
    from verl.workers.rollout.replica import RolloutReplica

    validate_config(cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    # the rollout section as verl's workers see it: its ``mtp`` comes from the model config, built from weights
    section = OmegaConf.to_container(cfg.actor_rollout_ref.rollout, resolve=True)
    if section.get("mtp") is None:
        section.pop("mtp")
    section = OmegaConf.create(section)
    rollout = omega_conf_to_dataclass(section, RolloutConfig)
    n_gpus = cfg.trainer.n_gpus_per_node * cfg.trainer.nnodes
    probe = type("Probe", (RolloutReplica,), dict.fromkeys(RolloutReplica.__abstractmethods__, lambda *a: None))
    replica = probe(replica_rank=0, config=section, model_config=None, gpus_per_node=cfg.trainer.n_gpus_per_node)
    assert n_gpus % replica.world_size == 0, f"{n_gpus} GPUs do not split into rollout replicas of {replica.world_size}"
    assert rollout.max_model_len is None or rollout.prompt_length + rollout.response_length <= rollout.max_model_len


@pytest.mark.parametrize("algo", ["grpo", "ppo"])
@pytest.mark.parametrize(("model", "machine", "gpus", "nodes"), CASES)
def test_every_preset_command_passes_verls_validation(tmp_path, stand_in, model, machine, gpus, nodes, algo):
    model_args = model.replace("BC_CHECKPOINT", stand_in).split(" ")  # RL from behaviour cloning: a model by path
    args = dry_run("--env_name", "maze", "--model", *model_args, "--preset", machine, "--algo", algo,
                   "--output_dir", str(tmp_path / "run"), f"data_dir={tmp_path / 'data'}",
                   f"trainer.n_gpus_per_node={gpus}", f"trainer.nnodes={nodes}")
    cfg = compose(with_weights(args, stand_in))
    verl_checks(cfg)
    assert cfg.trainer.n_gpus_per_node == gpus and cfg.trainer.nnodes == nodes
    assert cfg.algorithm.adv_estimator == {"grpo": "grpo", "ppo": "gae"}[algo]
    if machine == "gpu":
        assert cfg.actor_rollout_ref.rollout.name == "vllm"
        # no flash-attn here: PyTorch's sdpa, and no remove-padding (its packed sequences need flash-attn)
        assert cfg.actor_rollout_ref.model.override_config.attn_implementation == "sdpa"
        assert cfg.actor_rollout_ref.model.use_remove_padding is False
        assert cfg.trainer.save_freq >= 10 and cfg.trainer.max_actor_ckpt_to_keep == 2
        seq = cfg.data.max_prompt_length + cfg.data.max_response_length
        assert cfg.actor_rollout_ref.actor.ppo_max_token_len_per_gpu >= seq  # a micro-batch holds a sequence
    else:
        assert cfg.actor_rollout_ref.rollout.name == "hf" and cfg.trainer.save_freq == 1


def test_every_model_preset_is_covered():
    """A preset added to configs/model/ without a case above fails here."""
    covered = {word for m, *_ in CASES for word in m.split(" ")}
    for name in preset_names():
        preset = model_preset(name)
        assert name in covered or preset.get("path") in covered or name == "default", name


def test_a_world_size_the_batch_does_not_split_into_is_refused(tmp_path, stand_in):
    """The check is real: 32 prompts x 4 samples over 3 GPUs is refused by verl's own validation."""
    args = dry_run("--env_name", "maze", "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--preset", "gpu",
                   "--output_dir", str(tmp_path / "run"), "trainer.n_gpus_per_node=3",
                   "actor_rollout_ref.actor.use_dynamic_bsz=false")
    with pytest.raises(AssertionError, match="divisible"):
        verl_checks(compose(with_weights(args, stand_in)))


def test_a_hub_model_without_a_preset_gets_the_default_settings_not_verls():
    preset = model_preset("some-org/a-model-without-a-preset")
    assert preset["path"] == "some-org/a-model-without-a-preset"
    assert preset["verl"]["data.max_response_length"] == budgets.AUTO
    assert preset["agentevol"]["sft"]["lr"] <= 1e-4  # a pretrained model, not the tiny one's 3e-3
    assert model_preset("Qwen/Qwen2.5-7B-Instruct") == model_preset("qwen2.5-7b")  # the hub name finds its preset


def test_budgets_follow_the_turn_limit_and_refuse_a_prompt_that_would_be_cut():
    settings = {budgets.PROMPT_KEY: budgets.AUTO, budgets.RESPONSE_KEY: budgets.AUTO}
    prompts = budgets.PromptLengths(longest=700, rows=10, exact=True)
    changed, notes = budgets.resolve(settings, prompts=prompts, turn_limits={"webshop": 15, "maze": 40},
                                     agent_turns=30, reply_tokens=512, observation_tokens=512, context=None)
    assert changed[budgets.PROMPT_KEY] == 704  # 700 rounded up to 64
    assert changed[budgets.RESPONSE_KEY] == 30 * 1024  # maze's 40 capped by agent.max_turns 30
    assert changed["actor_rollout_ref.actor.ppo_max_token_len_per_gpu"] == 704 + 30 * 1024
    changed, notes = budgets.resolve(settings, prompts=prompts, turn_limits={"webshop": 15}, agent_turns=30,
                                     reply_tokens=512, observation_tokens=512, context=8192)
    assert changed[budgets.RESPONSE_KEY] == 8192 - 704 and "context of 8192" in notes[-1]
    with pytest.raises(budgets.BudgetError, match="longest first prompt is 700 tokens"):
        budgets.resolve({budgets.PROMPT_KEY: 512, budgets.RESPONSE_KEY: 1024}, prompts=prompts, turn_limits={},
                        agent_turns=None, reply_tokens=32, observation_tokens=64, context=None)


def test_the_longest_first_prompt_is_counted_as_the_models_chat_template_counts_it(tmp_path):
    """The prompt budget's measurement: a tiny model is counted from its ``tokenizers`` file (the launcher does not
    import transformers for it), any other model through ``AutoTokenizer.apply_chat_template``; both must give the
    chat template's token count of the longest first prompt (not, say, the length of the dict transformers 5
    returns by default)."""
    import shutil

    import pandas as pd
    from transformers import AutoTokenizer

    from openmanus_rl.tiny_model import build_tiny_model

    chats = [[{"role": "system", "content": "You play a maze. " * k}, {"role": "user", "content": f"Go {k} steps."}]
             for k in (1, 40, 7)] + [[{"role": "user", "content": "Ünïcode — and\nnew lines\n\n" * 30}]]
    files = [tmp_path / "train.parquet", tmp_path / "test.parquet"]
    pd.DataFrame({"prompt": chats[:2]}).to_parquet(files[0])
    pd.DataFrame({"prompt": chats[2:]}).to_parquet(files[1])
    tiny = build_tiny_model(tmp_path / "tiny", corpus=["You play a maze.", "Go north."], cache=None)
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    lengths = [len(tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=True, return_dict=False))
               for c in chats]
    assert min(lengths) > 10 and len(set(lengths)) == 4
    assert budgets.longest_first_prompt(files, str(tiny)) == budgets.PromptLengths(max(lengths), 4, exact=True)
    other = shutil.copytree(tiny, tmp_path / "other")  # the same tokenizer, not a tiny build: transformers counts it
    (other / "openmanus_tiny_model.json").unlink()
    assert budgets.longest_first_prompt(files, str(other)) == budgets.PromptLengths(max(lengths), 4, exact=True)


def test_replicas_auto_holds_a_steps_episodes():
    settings = {"data.train_batch_size": 16, "actor_rollout_ref.rollout.n": 4}
    episodes = capacity.concurrent_episodes(settings, val_tasks=8)
    assert episodes == 64
    found = [capacity.Need("sciworld", episodes, 16), capacity.Need("maze", episodes, 1024)]
    assert capacity.choose_replicas("auto", found)[0] == 4
    chosen, notes = capacity.choose_replicas("2", found)
    assert chosen == 2 and "sciworld: 64 episodes at once, 16 sessions a replica, 4 replicas" in notes[0]
    assert capacity.declared_sessions("sciworld") == 16 and capacity.declared_sessions("maze") == 1024


def test_dry_run_starts_no_server_and_builds_no_dataset(tmp_path):
    dry_run("--env_name", "maze", "--output_dir", str(tmp_path / "run"), f"data_dir={tmp_path / 'data'}")
    assert not (tmp_path / "data").exists() and not (tmp_path / "run").exists()


def test_agentevol_takes_the_model_presets_rates_and_budgets_and_the_command_line_wins():
    from openmanus_rl import agentevol
    from openmanus_rl.agentevol.config import bc_counts, eval_counts, explore_starts

    def config(*argv: str):
        return agentevol.load_config(*agentevol.parse_args(["--env_name", "maze", *argv]))

    tiny, hub = config(), config("--model", "Qwen/Qwen2.5-0.5B-Instruct")
    assert tiny.sft.lr == 3e-3 and tiny.explore.max_new_tokens == 32  # the tiny model's, configs/agentevol.yaml
    assert hub.sft.lr == 1e-5 and hub.explore.max_new_tokens == 512 and hub.eval.max_new_tokens == 512
    assert config("--model", "qwen2.5-0.5b", "sft.lr=2.0e-5").sft.lr == 2e-5
    agent = config("--model", "tiny-agent")  # per-environment limits (openmanus_rl.per_env); one given wins
    assert agent.max_turns.textcraft == 15 and agent.eval.max_new_tokens.babyai == 24
    # a tiny model's size is its preset's (tiny: AgentEvol's own, 128 wide, in its agentevol: block), the command
    # line's over it
    assert (agent.tiny.hidden_size, agent.tiny.num_layers, agent.tiny.vocab_size) == (128, 2, 4096)
    assert (tiny.tiny.hidden_size, tiny.tiny.vocab_size) == (128, 2048)
    assert config("--model", "tiny-agent", "tiny.vocab_size=1024").tiny.vocab_size == 1024
    # a per-environment mapping merges over configs/agentevol.yaml's one number for all
    assert bc_counts(agent, ["maze", "alfworld"]) == {"maze": 400, "alfworld": 1000}
    assert eval_counts(agent, ["maze", "alfworld"]) == {"maze": None, "alfworld": 50}
    # exploration starts past BC's tasks where the split has more (textcraft's BC holds all 444 of its train tasks)
    five = ["maze", "babyai", "alfworld", "textcraft", "movie"]
    starts, bc = explore_starts(agent, five), bc_counts(agent, five)
    assert starts == {**bc, "textcraft": 0} and explore_starts(tiny, five) == dict.fromkeys(five, 0)
    # a mapping on the command line replaces the preset's whole; one entry changes one environment's
    given = config("--model", "tiny-agent", "data.explore_tasks={default: 5}")
    assert given.data.explore_tasks == {"default": 5}
    one = config("--model", "tiny-agent", "data.explore_tasks.maze=7")
    assert one.data.explore_tasks == {"maze": 7, "babyai": 600, "default": 100}
    assert config("--model", "tiny-agent", "max_turns=12").max_turns == 12
    with pytest.raises(SystemExit, match=r"data\.explore_tasks is one value in this run, not one per environment"):
        config("data.explore_tasks.maze=7")  # configs/agentevol.yaml's one count for all
