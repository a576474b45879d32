"""Build a tiny Qwen2-architecture causal LM and a byte-level BPE tokenizer, offline and deterministically.

The result is a directory written with ``save_pretrained`` that verl (and transformers) load like a hub
model: ``actor_rollout_ref.model.path=DIR``. Used by tests, demos and CPU smoke runs; real runs pass a hub
name or a local checkpoint instead.

    from openmanus_rl.tiny_model import build_tiny_model
    path = build_tiny_model("/tmp/tiny", corpus=texts_from_environments)

The tokenizer uses ChatML special tokens and a Qwen2-style chat template whose generation prompt is
``<|im_start|>assistant\\n``; generation stops at ``<|im_end|>`` (the EOS token).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

PAD_TOKEN = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIAL_TOKENS = [PAD_TOKEN, IM_START, IM_END]
QWEN2_PRETOKENIZE_REGEX = (  # transformers.models.qwen2.tokenization_qwen2.PRETOKENIZE_REGEX
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# A small default corpus: agent-style instructions, observations and actions. Real use passes environment text.
DEFAULT_CORPUS = [
    "You are an agent in a text environment. Think, then act.",
    "Observation: You are in a maze. You can go north, south, east or west.",
    "Action: go north",
    "Action: go south",
    "Action: go east",
    "Action: go west",
    "Observation: You see a wall. Valid actions: look, inventory, take key, open door.",
    "Action: take key",
    "Action: open door",
    "Observation: The door is open. You win! Reward: 1.0",
    "Guess the five letter word. Feedback: green yellow gray gray green.",
    "Action: guess apple",
    "Action: search[red shoes] then click[buy now]",
    "Thought: I should check the inventory first. Action: inventory",
    "The answer is 42. Task complete.",
    "0 1 2 3 4 5 6 7 8 9 10 + - * / = ( ) [ ] { } , . ; : ! ? ' \"",
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ",
]

_BUILD_INFO = "openmanus_tiny_model.json"
_FORMAT_VERSION = 2
CACHE_VAR = "AGENTENV_RL_CACHE"


def default_cache() -> Path | None:
    """Where the launchers keep built tiny models for the next run with the same settings:
    ``$AGENTENV_RL_CACHE/tiny_models`` or ``~/.cache/agentenv-rl/tiny_models``; ``AGENTENV_RL_CACHE=off``: none.
    A build is a few seconds plus torch's import; a launcher that finds its model here imports neither."""
    root = os.environ.get(CACHE_VAR, "")
    if root.lower() in ("off", "0", "none"):
        return None
    base = Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentenv-rl"
    return base / "tiny_models"


def _settings(corpus: list[str], hidden_size, num_layers, vocab_size, num_heads, num_kv_heads, intermediate_size,
              max_position_embeddings, seed) -> dict:
    digest = hashlib.sha256("\x00".join(corpus).encode("utf-8")).hexdigest()
    return {
        "format_version": _FORMAT_VERSION,
        "corpus_sha256": digest,
        "hidden_size": hidden_size,
        "num_layers": num_layers,
        "vocab_size": vocab_size,
        "num_heads": num_heads,
        "num_kv_heads": num_kv_heads,
        "intermediate_size": intermediate_size,
        "max_position_embeddings": max_position_embeddings,
        "seed": seed,
    }


def build_tokenizer(corpus: list[str], vocab_size: int = 512):
    """Train a byte-level BPE on ``corpus`` (deterministic) and wrap it as a transformers fast tokenizer."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    # Same normalizer / pre-tokenizer as transformers' Qwen2Tokenizer: AutoTokenizer loads a
    # model_type=qwen2 directory with that class, which rebuilds them from vocab + merges.
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    # ChatML scaffolding is part of every prompt, so let BPE see it too.
    texts = list(corpus) + [f"{IM_START}user\n{t}{IM_END}\n{IM_START}assistant\n" for t in corpus[:64]]
    tok.train_from_iterator(texts, trainer=trainer)
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token=IM_END,
        pad_token=PAD_TOKEN,
        unk_token=None,
        additional_special_tokens=[IM_START, IM_END],
        model_max_length=1 << 20,
        clean_up_tokenization_spaces=False,
    )
    hf_tok.chat_template = CHAT_TEMPLATE
    return hf_tok


def build_tiny_model(
    out_dir: str | os.PathLike,
    corpus: list[str] | None = None,
    hidden_size: int = 64,
    num_layers: int = 2,
    vocab_size: int = 512,
    seed: int = 0,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 4096,
    cache: str | os.PathLike | None = None,
) -> Path:
    """Build (or reuse) a tiny Qwen2 causal LM + tokenizer in ``out_dir`` and return the path.

    Deterministic: the same arguments give byte-identical weights and the same tokenizer. Idempotent: if
    ``out_dir`` already holds a build with the same settings (and corpus), it is reused untouched; if it
    holds a different build, that build is replaced. With ``cache`` (a directory, e.g. :func:`default_cache`),
    a build with the same settings kept there is copied instead of built, and a new build is kept there.
    ``vocab_size`` is an upper bound: the BPE may learn fewer tokens on a small corpus, and the model's
    vocabulary equals the tokenizer's. Defaults give ~0.1M parameters.
    """
    out = Path(out_dir)
    corpus = list(corpus) if corpus else list(DEFAULT_CORPUS)
    intermediate_size = intermediate_size or 2 * hidden_size
    settings = _settings(corpus, hidden_size, num_layers, vocab_size, num_heads, num_kv_heads, intermediate_size,
                         max_position_embeddings, seed)
    if _holds(out, settings):
        return out
    kept = None
    if cache is not None:
        kept = Path(cache) / hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:32]
        if _holds(kept, settings):
            try:
                _write_atomically(out, lambda tmp: shutil.copytree(kept, tmp, dirs_exist_ok=True))
                return out
            except OSError:  # replaced under us by another process's build: build it here
                pass
    _write_atomically(out, lambda tmp: _build(tmp, corpus, settings))
    if kept is not None and not _holds(kept, settings):
        try:
            _write_atomically(kept, lambda tmp: shutil.copytree(out, tmp, dirs_exist_ok=True))
        except OSError:  # a cache that cannot be written is no cache; the build is in out_dir
            pass
    return out


def _holds(directory: Path, settings: dict) -> bool:
    """Whether ``directory`` holds a whole build of ``settings`` (its record is written last)."""
    try:
        return json.loads((directory / _BUILD_INFO).read_text()) == settings
    except (OSError, ValueError):
        return False


def _write_atomically(out: Path, write) -> None:
    """``write(tmp)`` into a temporary directory next to ``out``, then swap it in: a concurrent or interrupted
    build never leaves a partial directory under ``out``'s name."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        write(tmp)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _build(directory: Path, corpus: list[str], settings: dict) -> None:
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    hidden_size, vocab_size, seed = settings["hidden_size"], settings["vocab_size"], settings["seed"]
    tokenizer = build_tokenizer(corpus, vocab_size=vocab_size)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=settings["intermediate_size"],
        num_hidden_layers=settings["num_layers"],
        num_attention_heads=settings["num_heads"],
        num_key_value_heads=settings["num_kv_heads"],
        max_position_embeddings=settings["max_position_embeddings"],
        tie_word_embeddings=True,
        bos_token_id=tokenizer.convert_tokens_to_ids(IM_START),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        dtype="float32",
    )
    fork_devices = []
    with torch.random.fork_rng(devices=fork_devices):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=[tokenizer.eos_token_id, tokenizer.pad_token_id],
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=config.bos_token_id,
    )

    model.save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    (directory / _BUILD_INFO).write_text(json.dumps(settings, indent=1, sort_keys=True))


def chat_token_counts(directory: str | os.PathLike, chats: list[list[dict[str, str]]]) -> list[int] | None:
    """How many tokens each chat is when rendered for generation, as ``apply_chat_template(chat,
    add_generation_prompt=True)`` of the tiny model's tokenizer counts them, read with the ``tokenizers`` file and
    the template's known form: the launcher counts thousands of first prompts without importing transformers and
    torch (~8 s). ``None`` when ``directory`` is not a tiny-model build with its template unchanged."""
    d = Path(directory)
    try:
        if not (d / _BUILD_INFO).is_file() or (d / "chat_template.jinja").read_text() != CHAT_TEMPLATE:
            return None
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(d / "tokenizer.json"))
    except Exception:  # unreadable, or not a tokenizers file: the caller's general path decides
        return None
    texts = ["".join(f"{IM_START}{m['role']}\n{m['content']}{IM_END}\n" for m in chat) + f"{IM_START}assistant\n"
             for chat in chats]
    return [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


def count_parameters(model_dir: str | os.PathLike) -> int:
    """Number of parameters of a saved model (convenience for tests and docs)."""
    from transformers import AutoModelForCausalLM

    return sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(model_dir).parameters())
