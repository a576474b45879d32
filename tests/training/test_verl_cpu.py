"""verl 0.9.1 on CPU: plugin, tiny model, hf rollout, presets, and verl's real trainer end to end."""

import asyncio
import hashlib
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from openmanus_rl.tiny_model import build_tiny_model, count_parameters

ENV = dict(os.environ, TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1")
ENV.pop("VERL_PLATFORM", None)
ENV.pop("OPENMANUS_VERL_CPU", None)

cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="CPU preset tests run on CPU-only hosts")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def _run_python(code: str, env: dict | None = None) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         env=env or ENV, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


# ------------------------------------------------------------------------------------------- plugin
@cpu_only
def test_import_verl_loads_plugin_and_selects_cpu_platform():
    # fresh interpreter: only `import verl` (the entry point) may load the plugin
    out = _run_python(
        """
        import sys
        import verl
        assert "openmanus_rl.verl_cpu.plugin" in sys.modules, "verl.plugins entry point did not load"
        from verl.plugin.platform import PlatformRegistry, get_platform
        from verl.utils.device import get_device_name, get_nccl_backend, get_device_id
        import openmanus_rl.verl_cpu.plugin as plugin
        print(PlatformRegistry.registered_names(), get_device_name(), get_nccl_backend(), get_device_id())
        import verl.workers.engine_workers, verl.utils.distributed as dist
        from verl.workers.rollout.replica import RolloutReplicaRegistry
        from verl.workers.rollout.base import get_rollout_class
        from verl.workers.engine.base import EngineRegistry
        print(RolloutReplicaRegistry.get("hf").__name__, get_rollout_class("hf", "async").__name__)
        print(EngineRegistry.get_engine_cls("language_model", "fsdp2").__name__,
              EngineRegistry.get_engine_cls("value_model", "fsdp2").__name__)
        ew = verl.workers.engine_workers
        print(ew.initialize_global_process_group_ray is dist.initialize_global_process_group_ray,
              dist._openmanus_cpu_patched)
        print(plugin.plugin_status())
        """
    )
    lines = out.strip().splitlines()
    assert "'cpu'" in lines[0] and lines[0].endswith("cpu gloo cpu")
    assert lines[1] == "HFReplica HFServerAdapter"
    assert lines[2] == "FSDPEngineWithLMHead FSDPEngineWithValueHead"
    assert lines[3] == "True True"
    assert "'patches_applied': True" in lines[4] and "'engines_registered': True" in lines[4]


def test_launchers_import_neither_verl_nor_torch(tmp_path):
    """The launchers read presets and write verl's files without verl: a user's mistake is one line
    without first waiting for verl's and torch's imports; only ``import verl`` loads the plugin. On a machine
    without a GPU the ``auto`` preset is chosen, and a tiny model's prompts are counted, without torch or
    transformers (the launcher's own 10 s before verl's)."""
    import pandas as pd

    from openmanus_rl.tiny_model import build_tiny_model

    tiny = build_tiny_model(tmp_path / "tiny", corpus=["Go north."], cache=None)
    prompts = tmp_path / "train.parquet"
    pd.DataFrame({"prompt": [[{"role": "user", "content": "Go north."}]]}).to_parquet(prompts)
    out = _run_python(
        f"""
        import sys
        import openmanus_rl.agentevol, openmanus_rl.evaluate, openmanus_rl.sft, openmanus_rl.train
        from openmanus_rl import budgets
        from openmanus_rl.verl_cpu import verl_overrides
        assert verl_overrides("cpu") and verl_overrides("auto") == verl_overrides("cpu")
        assert budgets.longest_first_prompt([{str(prompts)!r}], {str(tiny)!r}).exact
        print([m for m in ("verl", "torch", "transformers", "ray", "openmanus_rl.verl_cpu.plugin")
               if m in sys.modules])
        """
    )
    assert out.strip() == "[]"


def test_the_worker_setup_hook_registers_on_import_and_imports_nothing_itself():
    """Ray runs the hook in every worker of a run; the workers that never import verl's registries (storage,
    load balancer, idle prestarted ones) must not pay verl's import for it, the ones that do must find the
    trainer mode and the estimators whichever registry module they import first."""
    out = _run_python(
        """
        import sys
        from openmanus_rl import worker_setup
        worker_setup.setup()
        print([m for m in ("verl", "torch", "openmanus_rl.trainer", "openmanus_rl.advantages") if m in sys.modules])
        from verl.trainer.ppo import core_algos
        print("gigpo" in core_algos.ADV_ESTIMATOR_REGISTRY)
        from verl.trainer.ppo.v1.trainer_base import get_trainer_cls
        print(get_trainer_cls("openmanus_sync").__name__)
        """
    )
    assert out.strip().splitlines() == ["[]", "True", "OpenManusTrainer"]


def test_plugin_steps_aside_when_an_accelerator_exists(monkeypatch):
    from openmanus_rl.verl_cpu import platform as p

    monkeypatch.delenv("VERL_PLATFORM", raising=False)
    monkeypatch.setattr(p, "accelerator_present", lambda: True)
    assert not p.cpu_platform_wanted()
    assert not p.PlatformCPU().is_platform_available(use_smi_check=True)
    monkeypatch.setattr(p, "accelerator_present", lambda: False)
    assert p.cpu_platform_wanted()
    monkeypatch.setenv("OPENMANUS_VERL_CPU", "0")
    assert not p.cpu_platform_wanted()
    monkeypatch.setenv("VERL_PLATFORM", "cpu")
    assert p.cpu_platform_wanted()
    monkeypatch.setenv("VERL_PLATFORM", "nvidia")
    assert not p.cpu_platform_wanted()


def test_gloo_process_group_through_verl():
    out = _run_python(
        """
        import os
        os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29617")
        import verl, torch
        from verl.utils.distributed import initialize_global_process_group_ray
        initialize_global_process_group_ray(timeout_second=None)
        t = torch.ones(2)
        torch.distributed.all_reduce(t)
        print(torch.distributed.get_backend(), t.tolist())
        """
    )
    assert out.strip() == "gloo [1.0, 1.0]"


# ------------------------------------------------------------------------------------------- tiny model
def test_tiny_model_is_deterministic_and_idempotent(tmp_path):
    a = build_tiny_model(tmp_path / "a", hidden_size=32, num_layers=1, vocab_size=300)
    b = build_tiny_model(tmp_path / "b", hidden_size=32, num_layers=1, vocab_size=300)

    def digest(d: Path) -> dict:
        return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(d.iterdir())}

    assert digest(a) == digest(b)
    mtime = (a / "model.safetensors").stat().st_mtime_ns
    assert build_tiny_model(tmp_path / "a", hidden_size=32, num_layers=1, vocab_size=300) == a
    assert (a / "model.safetensors").stat().st_mtime_ns == mtime  # reused, not rebuilt
    c = build_tiny_model(tmp_path / "a", hidden_size=32, num_layers=1, vocab_size=300, seed=1)  # new settings
    assert digest(c)["model.safetensors"] != digest(b)["model.safetensors"]
    assert 10_000 < count_parameters(b) < 1_000_000



def test_a_cached_tiny_model_is_copied_not_built(tmp_path, monkeypatch):
    """The launchers' cache: the first build is kept, the next with the same settings copies it (no BPE is
    trained: the build is not run), a build with other settings is built and kept beside it."""
    from openmanus_rl import tiny_model

    cache = tmp_path / "cache"
    first = build_tiny_model(tmp_path / "run1" / "model", hidden_size=32, num_layers=1, vocab_size=300, cache=cache)
    assert len(list(cache.iterdir())) == 1

    def no_build(*_a, **_k):
        raise AssertionError("built although the cache holds this model")

    monkeypatch.setattr(tiny_model, "build_tokenizer", no_build)
    second = build_tiny_model(tmp_path / "run2" / "model", hidden_size=32, num_layers=1, vocab_size=300, cache=cache)
    assert {f.name: f.read_bytes() for f in first.iterdir()} == {f.name: f.read_bytes() for f in second.iterdir()}
    with pytest.raises(AssertionError, match="built although"):  # other settings: not in the cache
        build_tiny_model(tmp_path / "run3" / "model", hidden_size=32, num_layers=1, vocab_size=300, seed=1,
                         cache=cache)
    assert not (tmp_path / "run3" / "model").exists()  # a failed build leaves no partial directory
    monkeypatch.undo()
    build_tiny_model(tmp_path / "run3" / "model", hidden_size=32, num_layers=1, vocab_size=300, seed=1, cache=cache)
    assert len(list(cache.iterdir())) == 2 and not [p for p in cache.iterdir() if p.name.startswith(".")]
    monkeypatch.setenv(tiny_model.CACHE_VAR, "off")
    assert tiny_model.default_cache() is None
    monkeypatch.setenv(tiny_model.CACHE_VAR, str(tmp_path / "c"))
    assert tiny_model.default_cache() == tmp_path / "c" / "tiny_models"

def test_tiny_model_loads_like_a_hub_model(tiny_model):
    from transformers import AutoConfig, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    cfg = AutoConfig.from_pretrained(tiny_model)
    assert cfg.model_type == "qwen2" and cfg.vocab_size == len(tok)
    assert 100_000 <= count_parameters(tiny_model) <= 1_000_000
    text = tok.apply_chat_template([{"role": "user", "content": "go north"}], add_generation_prompt=True,
                                   tokenize=False)
    assert text == "<|im_start|>user\ngo north<|im_end|>\n<|im_start|>assistant\n"
    assert tok.eos_token == "<|im_end|>" and tok.pad_token_id is not None
    assert len(tok.encode("\n", add_special_tokens=False)) == 1  # needed by verl's Qwen token builder
    s = "Observation: You see a wall.\n  Valid actions: take key 123"
    assert tok.decode(tok.encode(s, add_special_tokens=False)) == s


# ------------------------------------------------------------------------------------------- generation
@pytest.fixture(scope="module")
def hf_model(tiny_model):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_model, attn_implementation="sdpa").eval()
    return model, AutoTokenizer.from_pretrained(tiny_model)


def test_generator_batches_match_single_requests_and_logprobs(hf_model):
    from openmanus_rl.verl_cpu.generation import GenRequest, HFGenerator

    model, tok = hf_model
    gen = HFGenerator(model, [tok.eos_token_id], tok.pad_token_id, seed=0)
    reqs = [GenRequest([1, 5, 6, 7, 8, 9], 12, temperature=0), GenRequest([1, 5], 7, temperature=0),
            GenRequest([3, 4, 5], 5, temperature=1.0, top_p=0.9, top_k=20)]
    batched = gen.generate(reqs)
    for req, res in zip(reqs, batched, strict=True):
        assert len(res.token_ids) == len(res.log_probs) <= req.max_tokens
        assert all(lp <= 0 for lp in res.log_probs)
    for req, res in zip(reqs[:2], batched[:2], strict=True):  # greedy: left padding changes nothing
        single = gen.generate([req])[0]
        assert single.token_ids == res.token_ids
        assert max(abs(a - b) for a, b in zip(single.log_probs, res.log_probs, strict=True)) < 1e-4
        # log-probs are those of the full sequence under the model
        ids = torch.tensor([req.prompt_ids + res.token_ids])
        with torch.no_grad():
            logp = torch.log_softmax(model(ids).logits[0, :-1].float(), -1)
        n = len(req.prompt_ids)
        ref = [logp[n - 1 + i, t].item() for i, t in enumerate(res.token_ids)]
        assert max(abs(a - b) for a, b in zip(ref, res.log_probs, strict=True)) < 1e-4


def test_generator_stops_at_eos_unless_ignored(hf_model):
    from openmanus_rl.verl_cpu.generation import GenRequest, HFGenerator

    model, tok = hf_model
    first = HFGenerator(model, [], tok.pad_token_id).generate([GenRequest([1, 5, 6], 4, temperature=0)])[0]
    eos = first.token_ids[0]  # pretend the greedy first token is EOS
    gen = HFGenerator(model, [eos], tok.pad_token_id)
    stopped = gen.generate([GenRequest([1, 5, 6], 4, temperature=0)])[0]
    assert stopped.token_ids == [eos] and stopped.finish_reason == "stop"
    ignored = gen.generate([GenRequest([1, 5, 6], 4, temperature=0, ignore_eos=True)])[0]
    assert len(ignored.token_ids) == 4 and ignored.finish_reason == "length"


def test_prefix_cache_turns_match_encoding_the_whole_conversation(hf_model):
    """Episodes whose prompts extend what an earlier turn ran start from its keys/values and generate
    what re-encoding everything would, in batches mixing cached rows of different lengths, new
    episodes and prompts that extend nothing."""
    from openmanus_rl.verl_cpu.generation import GenRequest, HFGenerator
    from openmanus_rl.verl_cpu.prefix_cache import PrefixCache

    model, tok = hf_model
    plain = HFGenerator(model, [tok.eos_token_id], tok.pad_token_id)
    cache = PrefixCache(100_000)
    cached = HFGenerator(model, [tok.eos_token_id], tok.pad_token_id, prefix_cache=cache)
    episodes = [[1, 5, 6, 7], [1, 9], [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]]

    def same(reqs):
        got = cached.generate(reqs)
        want = plain.generate([GenRequest(list(r.prompt_ids), r.max_tokens, temperature=0) for r in reqs])
        for g, w in zip(got, want, strict=True):
            assert g.token_ids == w.token_ids and g.finish_reason == w.finish_reason
            assert max((abs(a - b) for a, b in zip(g.log_probs, w.log_probs, strict=True)), default=0) < 1e-4
        return got

    for turn in range(4):
        if turn == 2:
            episodes.append([2, 3, 4])  # an episode that starts later
        reqs = [GenRequest(list(c), 6, temperature=0) for c in episodes]
        got = same([*reqs, GenRequest([2, 7, 7, turn], 4, temperature=0)])  # a one-turn request
        for conv, g in zip(episodes, got, strict=False):
            conv.extend(g.token_ids + [40 + turn, 41, 42])  # the reply as generated, then an observation
    assert cache.hits > cache.misses

    # a history that was edited extends no entry: encoded whole, same result
    hits = cache.hits
    same([GenRequest(episodes[0][:6] + [99, 98], 5, temperature=0)])
    assert cache.hits == hits


def test_prefix_cache_finds_the_longest_entry_and_is_bounded():
    from openmanus_rl.verl_cpu.prefix_cache import CachedPrefix, PrefixCache

    def entry(tokens):
        n = len(tokens)
        return CachedPrefix(list(tokens), [(torch.zeros(1, n, 2), torch.zeros(1, n, 2))])

    cache = PrefixCache(10)
    cache.put(entry([1, 2]))
    cache.put(entry([1, 2, 3, 4]))
    assert cache.take([1, 2, 3, 4, 5]).token_ids == [1, 2, 3, 4]  # the longest it starts with
    assert cache.take([1, 2, 3, 4, 5]).token_ids == [1, 2]  # each entry is used once
    cache.put(entry([5, 6, 7, 8]))
    assert cache.take([5, 6, 7, 8]) is None  # the whole prompt: one token must be left to encode
    cache.put(entry([1, 1, 1, 1]))
    cache.put(entry([2, 2, 2, 2]))  # over 10 tokens: [5, 6, 7, 8], the oldest, goes
    assert len(cache) == 2 and cache.tokens == 8 and cache.take([5, 6, 7, 8, 9]) is None
    cache.put(entry(range(11)))  # larger than the whole cache: not kept
    assert len(cache) == 2

    # an entry of prompt [1, 2, 3] + reply [7, 8] also serves a prompt that re-tokenized the reply differently
    # (its keys and values cut to the prompt's 3 tokens)
    cache = PrefixCache(100)
    cache.put(CachedPrefix([1, 2, 3, 7, 8], [(torch.arange(5.0).view(1, 5, 1),) * 2], prompt_length=3))
    got = cache.take([1, 2, 3, 78, 9])
    assert got.token_ids == [1, 2, 3] and got.layers[0][0].flatten().tolist() == [0.0, 1.0, 2.0]
    assert len(cache) == 0 and cache.tokens == 0 and cache.take([1, 2, 3, 7, 8, 9]) is None  # used once
    cache.put(CachedPrefix([1, 2, 3, 7, 8], [(torch.zeros(1, 5, 1),) * 2], prompt_length=3))
    assert cache.take([1, 2, 3, 7, 8, 9]).token_ids == [1, 2, 3, 7, 8]  # the whole entry first


def _server(tiny_model, **engine_kwargs):
    from transformers import AutoTokenizer

    from openmanus_rl.verl_cpu.rollout import HFRolloutServer

    config = {"prompt_length": 64, "response_length": 16, "max_num_seqs": 64, "seed": 0,
              "engine_kwargs": {"hf": engine_kwargs}}
    model_config = SimpleNamespace(local_path=str(tiny_model), tokenizer=AutoTokenizer.from_pretrained(tiny_model),
                                   generation_config=None, trust_remote_code=False)
    return HFRolloutServer(config=config, model_config=model_config)


async def test_rollout_server_concurrent_generate_and_weight_update(tiny_model):
    server = _server(tiny_model, batch_wait_ms=50)
    prompts = [[1, 10 + i, 20 + i, 2, 201, 1] for i in range(12)]
    greedy = {"temperature": 0, "top_p": 1.0, "top_k": -1, "logprobs": True}

    outs = await asyncio.gather(*[server.generate(prompt_ids=p, sampling_params=dict(greedy, max_tokens=5),
                                                  request_id=str(i)) for i, p in enumerate(prompts)])
    for out in outs:
        assert 1 <= len(out.token_ids) <= 5 and len(out.log_probs) == len(out.token_ids)
        assert out.stop_reason == "completed" and out.extra_fields["global_steps"] == 0
    stats = await server.get_stats()
    assert stats["requests"] == 12 and stats["batches"] < 12  # concurrent calls were batched
    assert len(server.prefix_cache) == 12  # one entry per conversation, whatever the request ids

    # default budget: min(response_length, prompt_length + response_length - len(prompt))
    out = await server.generate(prompt_ids=prompts[0], sampling_params={"temperature": 1.0, "ignore_eos": True})
    assert len(out.token_ids) == 16 and out.log_probs is None

    # a weight update changes what is generated, and tags outputs with the new global step
    state = await server.get_state_dict()
    new = [(k, torch.randn_like(v)) for k, v in state.items() if k != "lm_head.weight"]  # tied to embeddings
    assert await server.update_weights(new, global_steps=3) > 0
    assert len(server.prefix_cache) == 0  # what the old weights computed is gone
    outs2 = await asyncio.gather(*[server.generate(prompt_ids=p, sampling_params=dict(greedy, max_tokens=5))
                                   for p in prompts])
    assert [o.token_ids for o in outs2] != [o.token_ids for o in outs]
    assert outs2[0].extra_fields["global_steps"] == 3
    state2 = await server.get_state_dict()
    assert all(torch.equal(state2[k], v) for k, v in new)
    assert torch.equal(state2["lm_head.weight"], state2["model.embed_tokens.weight"])

    # abort: queued requests come back "aborted"; generation resumes afterwards
    await server.abort_all_requests(reject_request=True)
    out = await server.generate(prompt_ids=prompts[0], sampling_params=dict(greedy, max_tokens=3))
    assert out.stop_reason == "aborted" and out.token_ids == []
    await server.resume_generation()
    out = await server.generate(prompt_ids=prompts[0], sampling_params=dict(greedy, max_tokens=3))
    assert out.stop_reason == "completed" and len(out.token_ids) >= 1
    await server.wait_for_requests_to_drain()


async def test_rollout_server_rejects_prompts_beyond_context(tiny_model):
    server = _server(tiny_model)
    server.max_model_len = 8
    with pytest.raises(ValueError, match="no room"):
        await server.generate(prompt_ids=list(range(3, 11)), sampling_params={"max_tokens": 2})


# ------------------------------------------------------------------------------------------- presets
def test_verl_overrides_render_presets(tiny_model, monkeypatch):
    from openmanus_rl.verl_cpu import default_preset, verl_overrides

    cpu = verl_overrides("cpu", model_path=str(tiny_model),
                         overrides={"trainer.n_gpus_per_node": 2, "data.train_files": "/x y/t.parquet",
                                    "trainer.logger": ["console", "wandb"], "+extra.key": None})
    assert f"actor_rollout_ref.model.path={tiny_model}" in cpu and f"critic.model.path={tiny_model}" in cpu
    assert "actor_rollout_ref.rollout.name=hf" in cpu and "trainer.device=cpu" in cpu
    assert "+ray_kwargs.ray_init.num_gpus=2" in cpu and "trainer.n_gpus_per_node=2" in cpu
    assert "data.train_files='/x y/t.parquet'" in cpu and "trainer.logger=[console,wandb]" in cpu
    assert "+extra.key=null" in cpu
    keys = [o.split("=", 1)[0].lstrip("+") for o in cpu]
    assert len(keys) == len(set(keys))  # hydra rejects duplicate keys
    gpu = verl_overrides("gpu", overrides=["actor_rollout_ref.rollout.name=sglang"], n_gpus_per_node=8)
    assert "actor_rollout_ref.rollout.name=sglang" in gpu and "trainer.n_gpus_per_node=8" in gpu
    sft = verl_overrides("cpu_sft", model_path="/m")
    assert "model.path=/m" in sft and "engine.strategy=fsdp2" in sft
    assert not any(o.startswith("actor_rollout_ref") for o in sft)
    from openmanus_rl import verl_args

    monkeypatch.setattr(verl_args, "GPU_DEVICE_NODES", ("/no/such/device",))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert default_preset() == "cpu"  # no GPU driver's device node: torch is not asked
    monkeypatch.setattr(verl_args, "GPU_DEVICE_NODES", ("/no/such/device", str(tiny_model)))  # one that exists
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert default_preset() == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert default_preset() == "gpu"


# ------------------------------------------------------------------------------------------- real trainer
@cpu_only
def test_sft_trainer_under_torchrun_on_gloo(tmp_path, tiny_model):
    import pandas as pd

    from openmanus_rl.verl_cpu import verl_overrides

    rows = [{"messages": [{"role": "user", "content": f"Task {i}: go north"},
                          {"role": "assistant", "content": "Action: go north"}]} for i in range(8)]
    pd.DataFrame(rows).to_parquet(tmp_path / "sft.parquet")
    args = verl_overrides("cpu_sft", model_path=str(tiny_model), overrides={
        "data.train_files": str(tmp_path / "sft.parquet"), "data.train_batch_size": 4,
        "trainer.total_training_steps": 2, "trainer.default_local_dir": str(tmp_path / "ckpt"),
        "trainer.n_gpus_per_node": 2})
    torchrun = Path(sys.executable).with_name("torchrun")
    out = subprocess.run([str(torchrun), "--nproc_per_node", "2", "-m", "verl.trainer.sft_trainer", *args],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env={**ENV, "OPENMANUS_DIE_WITH_PARENT": str(os.getpid())})  # as openmanus_rl.sft runs it
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    losses = [float(x) for x in re.findall(r"train/loss:([\d.]+)", out.stdout)]
    assert len(losses) == 2 and losses[1] < losses[0]
    assert (tmp_path / "ckpt" / "global_step_2").is_dir()


_REAPER = """
import ctypes, os, subprocess, sys, time
if {subreaper}:  # orphans of its descendants come to this process, as in a container or a CI runner
    assert ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
env = dict(os.environ, OPENMANUS_DIE_WITH_PARENT=str(os.getpid()))  # as openmanus_rl.sft sets it for torchrun
subprocess.run([sys.executable, "-c", {launcher!r}], env=env, check=True, timeout=30)
print("launched", flush=True)
while True:  # reap the orphan once it ends, so its pid disappears
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.1)
"""


@pytest.mark.parametrize("subreaper", [False, True], ids=["reparented-to-init", "reparented-to-a-subreaper"])
def test_a_worker_whose_launcher_died_before_it_armed_the_signal_ends_itself(tmp_path, subreaper):
    """torchrun killed while its worker still imports verl: the parent-death signal is armed too late to
    fire, so the worker must notice it is an orphan already (else it waits for a rendezvous forever),
    whether it went to init or, as in containers and CI runners, to a subreaper that is not pid 1 (the
    case a check for ppid 1 missed)."""
    pid_file = tmp_path / "worker.pid"
    worker = (f"import os, time; time.sleep(1.0); open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
              "from agentenv.processes import die_with_launcher; die_with_launcher('OPENMANUS_DIE_WITH_PARENT'); "
              "time.sleep(60)")  # what openmanus_rl.verl_cpu.plugin does in every verl process
    launcher = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {worker!r}])"  # exits at once
    reaper = subprocess.Popen([sys.executable, "-c", _REAPER.format(subreaper=subreaper, launcher=launcher)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert reaper.stdout.readline().strip() == "launched"
        deadline = time.time() + 30
        while not pid_file.exists() and time.time() < deadline:
            time.sleep(0.1)
        pid = int(pid_file.read_text())
        while time.time() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return  # it ended itself
            time.sleep(0.2)
        os.kill(pid, 9)
        raise AssertionError("the orphaned worker kept running")
    finally:
        reaper.kill()
        reaper.wait()


def test_a_worker_whose_launcher_lives_keeps_running():
    """The other side of the check above: a worker whose parent (torchrun) and grandparent (the launcher
    named in the variable) are alive arms the signal and goes on."""
    worker = ("import os; from agentenv.processes import die_with_launcher; "
              "print(die_with_launcher('OPENMANUS_DIE_WITH_PARENT'), die_with_launcher('OPENMANUS_DIE_WITH_PARENT'), "
              "os.environ['OPENMANUS_DIE_WITH_PARENT'] == str(os.getppid()))")
    launcher = (f"import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', {worker!r}]).returncode)")
    out = subprocess.run([sys.executable, "-c", launcher], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "OPENMANUS_DIE_WITH_PARENT": str(os.getpid())})
    assert out.returncode == 0, out.stderr[-2000:]
    # armed once; its own children will check for this process's parent
    assert out.stdout.strip() == "True None True"


def test_the_prefix_cache_is_sized_by_memory_so_every_episode_in_flight_fits(tmp_path):
    """A tiny model's keys and values take 1 KiB a token (2 layers x keys and values x 2 heads x 32 x 4 bytes):
    2 GiB hold 2,097,152 tokens, where the old fixed bound of 131,072 made textcraft's 50 evaluation episodes
    evict each other and re-encode whole conversations every turn; a large model keeps the floor."""
    from openmanus_rl.generation.prefix_cache import tokens_for
    from openmanus_rl.policies.chat import GenerationSettings
    from openmanus_rl.policies.hf import HFBackend, load_model
    from openmanus_rl.tiny_model import build_tiny_model

    model, tok = load_model(build_tiny_model(tmp_path / "tiny", hidden_size=128, num_layers=2))
    assert (model.config.num_key_value_heads, model.config.hidden_size // model.config.num_attention_heads) == (2, 32)
    assert tokens_for(model, 2 << 30, 1 << 17) == 2 << 20
    assert tokens_for(model, 1 << 20, 1 << 17) == 1 << 17  # the floor
    assert HFBackend(model, tok, GenerationSettings()).prefix_cache.max_tokens == 2 << 20


def test_decoding_attention_and_the_growing_cache_give_transformers_own_numbers():
    """openmanus_rl/generation/attention.py rewrites two copies away (repeat_kv for one query token, and the
    cache's concatenation per token); both must leave the numbers as transformers computes them."""
    from transformers.cache_utils import DynamicLayer
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from openmanus_rl.generation.attention import GrowingLayer, grouped_decode_sdpa

    torch.manual_seed(0)
    module = torch.nn.Module()
    module.num_key_value_groups, module.is_causal = 3, True
    query, key, value = torch.randn(4, 6, 1, 8), torch.randn(4, 2, 37, 8), torch.randn(4, 2, 37, 8)
    mask = torch.ones(4, 1, 1, 37, dtype=torch.bool)
    mask[1, ..., :5] = mask[3, ..., :20] = False  # left padding of different lengths
    for m in (mask, None):
        ours, _ = grouped_decode_sdpa(module, query, key, value, m, scaling=0.3)
        theirs, _ = sdpa_attention_forward(module, query, key, value, m, scaling=0.3)
        assert ours.shape == theirs.shape == (4, 1, 6, 8) and torch.allclose(ours, theirs, atol=1e-6)

    growing, plain = GrowingLayer(), DynamicLayer()
    for n in (300, 1, 1, 7, 1):  # a prefill past the first buffer, then tokens
        k, v = torch.randn(2, 2, n, 4), torch.randn(2, 2, n, 4)
        got, want = growing.update(k, v), plain.update(k, v)
        assert all(torch.equal(a, b) for a, b in zip(got, want, strict=True))
    assert growing.get_seq_length() == plain.get_seq_length() == 310


def test_packed_training_attention_gives_the_padded_batchs_numbers_and_generates_as_sdpa(tmp_path):
    """openmanus_rl/verl_cpu/packed_attention.py: sequences packed in one row (verl's use_remove_padding) attend
    each to itself alone; logits and gradients equal those of the same sequences right-padded under sdpa, and a
    model loaded with it decodes a left-padded batch exactly as sdpa does (its mask function defers to sdpa's)."""
    from transformers import AutoModelForCausalLM

    from openmanus_rl.tiny_model import build_tiny_model
    from openmanus_rl.verl_cpu import packed_attention

    packed_attention.register()
    path = build_tiny_model(tmp_path / "tiny", hidden_size=64, num_layers=2, vocab_size=300)
    sdpa = AutoModelForCausalLM.from_pretrained(path, attn_implementation="sdpa")
    packed = AutoModelForCausalLM.from_pretrained(path, attn_implementation=packed_attention.NAME)
    torch.manual_seed(0)
    with torch.no_grad():
        for p in [*sdpa.parameters(), *packed.parameters()]:  # trained-like weights: attention that matters
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())) * 0.3)
    lengths = [5, 40, 17, 1, 33]
    seqs = [torch.randint(3, 290, (n,)) for n in lengths]
    ids = torch.zeros(len(seqs), max(lengths), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, s in enumerate(seqs):
        ids[i, :len(s)], mask[i, :len(s)] = s, 1
    want = sdpa(input_ids=ids, attention_mask=mask, use_cache=False).logits
    want = torch.cat([want[i, :n] for i, n in enumerate(lengths)])
    positions = torch.cat([torch.arange(n) for n in lengths])[None]
    got = packed(input_ids=torch.cat(seqs)[None], position_ids=positions, use_cache=False).logits[0]
    assert got.shape == want.shape and torch.allclose(got, want, atol=1e-5)
    alone = packed(input_ids=seqs[1][None], use_cache=False).logits[0]  # no leak from the sequences before it
    assert torch.allclose(got[5:45], alone, atol=1e-5) and not torch.allclose(got[5:45], got[:40], atol=1e-2)
    want.logsumexp(-1).sum().backward()
    got.logsumexp(-1).sum().backward()
    for a, b in zip(sdpa.parameters(), packed.parameters(), strict=True):
        assert torch.allclose(a.grad, b.grad, atol=1e-4, rtol=1e-4)

    assert packed_attention.segments(positions, int(positions.shape[1])) == [(0, 5), (5, 45), (45, 62), (62, 63),
                                                                              (63, 96)]
    left = torch.zeros(2, 12, dtype=torch.long)
    left_mask = torch.zeros_like(left)
    left[0, 4:], left[1] = seqs[2][:8], seqs[4][:12]
    left_mask[0, 4:], left_mask[1] = 1, 1
    outs = [m.generate(input_ids=left, attention_mask=left_mask, max_new_tokens=6, do_sample=False, pad_token_id=0)
            for m in (sdpa, packed)]
    assert torch.equal(outs[0], outs[1])

    # trained with it (verl sets the config's attn_implementation), saved as an sdpa model that loads anywhere
    packed.config.attn_implementation = packed_attention.NAME
    packed.save_pretrained(tmp_path / "saved")
    assert '"attn_implementation": "sdpa"' in (tmp_path / "saved" / "config.json").read_text()
