"""Learning from failures: DPO on pairs of a successful and a failed trajectory of the same instruction.

The AgentGym paper's Table 6 variant of AgentEvol: besides the successes it keeps, each iteration builds
pairs (chosen: a success, rejected: a failure, same environment and task) and optimizes the agent on them
with DPO (Rafailov et al., 2023). A trajectory's log-probability is the sum over its trained agent turns
(AgentTraj's ``loss`` flags, the tokens behaviour cloning trains on); the observations between them are
context only. verl 0.9.1 has no pairwise trainer and its SFT trainer's loss sees one sequence at a time,
so this is a small plugin of its own: one process on one device (a GPU when there is one), the reference
log-probabilities computed once before training so one copy of the model is held. It suits the models
AgentEvol's CPU runs use and single-GPU models; it writes the same checkpoint layout as ``openmanus_rl.sft``
(``OUT/global_step_N/huggingface`` and verl's tracker file), so evaluation and the next iteration read it
the same way. Every ``save_every`` steps it keeps its whole state (weights, optimizer, schedule, random
states, the reference log-probabilities) in ``OUT.partial/resume.pt``; a stopped run started again on the
same pairs, model and settings goes on from there and ends with the weights an unstopped run ends with.

    python -m openmanus_rl.dpo --pairs pairs.jsonl --model PATH --out outputs/dpo [--beta 0.5] [--lr 1e-5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from openmanus_rl import atomic, expert_data, machine, trajectories
from openmanus_rl.policies.verl_ckpt import TRACKER


@dataclass(frozen=True)
class DPOSettings:
    beta: float = 0.5           # how far from the reference the implicit reward may pull
    lr: float = 1.0e-5          # 1e-4 with beta 0.1 and no NLL broke the CPU agent's replies in one pass
    epochs: int = 1
    batch_pairs: int = 8        # pairs per optimizer step
    sft_weight: float = 1.0     # + this x the chosen trajectory's per-token NLL (keeps the successes likely)
    max_length: int = 4096      # tokens per trajectory; longer ones are cut at the right
    warmup_steps: int = 0
    seed: int = 1
    save_every: int = 20        # optimizer steps between resume states (0: none); a save costs a model's size


def pairs_for(items: Iterable[dict[str, Any]], threshold: float | None, extra_chosen: Iterable[dict[str, Any]] = (),
              ) -> list[dict[str, Any]]:
    """Preference pairs from one environment's explored ``items``: every failure paired with a success of
    the same task, a sampled one where the task has one (its draws taken in turn), else one of
    ``extra_chosen`` (the initial data: the expert's episode of a task the agent failed). Tasks with no
    failure or no success give none."""
    wins: dict[int, list[dict[str, Any]]] = {}
    losses: dict[int, list[dict[str, Any]]] = {}
    for it in items:
        (wins if expert_data.succeeded(it, threshold) else losses).setdefault(task_of(it), []).append(it)
    fallback: dict[int, dict[str, Any]] = {}
    for it in extra_chosen:
        fallback.setdefault(task_of(it), it)
    pairs = []
    for task, failed in sorted(losses.items()):
        chosen = wins.get(task) or ([fallback[task]] if task in fallback else [])
        if not chosen:
            continue
        pairs += [{"item_id": rejected["item_id"], "task_id": task, "chosen": chosen[j % len(chosen)],
                   "rejected": rejected} for j, rejected in enumerate(failed)]
    return pairs


def task_of(item: dict[str, Any]) -> int:
    """The task an AgentTraj item played: ``task_id`` where recorded, else its ``<env>_<task>`` item id."""
    if item.get("task_id") is not None:
        return int(item["task_id"])
    return trajectories.parse_item_id(str(item["item_id"]))[1]


def encode(tokenizer: Any, item: dict[str, Any], max_length: int) -> tuple[list[int], list[int]]:
    """Token ids of a trajectory in the chat template and a 0/1 mask of the tokens its loss counts: each
    trained agent message without its generation header, with its end-of-turn tokens (as verl's SFT)."""
    messages = trajectories.to_messages(item)
    flags = trajectories.loss_mask(item)
    ids: list[int] = []
    mask: list[int] = []
    for i, (m, trained) in enumerate(zip(messages, flags, strict=True)):
        upto = template_ids(tokenizer, messages[: i + 1])
        new = upto[len(ids):]
        if trained and m["role"] == "assistant":
            header = len(template_ids(tokenizer, messages[:i], generation_prompt=True)) if i else 0
            head = max(0, header - len(ids))
            mask += [0] * head + [1] * (len(new) - head)
        else:
            mask += [0] * len(new)
        ids = list(upto)
    return ids[:max_length], mask[:max_length]


def template_ids(tokenizer: Any, messages: list[dict[str, str]], generation_prompt: bool = False) -> list[int]:
    ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=generation_prompt,
                                        return_dict=False)
    return list(ids["input_ids"] if isinstance(ids, dict) else ids)


def sequence_logps(model: Any, batch: Sequence[tuple[list[int], list[int]]], pad_id: int) -> tuple[Any, Any]:
    """Per sequence: the sum of the masked tokens' log-probabilities, and how many tokens that is."""
    import torch

    width = max(len(ids) for ids, _ in batch)
    device = next(model.parameters()).device
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    attn = torch.zeros((len(batch), width), dtype=torch.long)
    for row, (x, m) in enumerate(batch):
        ids[row, : len(x)] = torch.tensor(x)
        mask[row, : len(m)] = torch.tensor(m)
        attn[row, : len(x)] = 1
    ids, mask, attn = ids.to(device), mask.to(device), attn.to(device)
    logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()
    target = ids[:, 1:]
    token_logps = torch.gather(logits.log_softmax(-1), 2, target.unsqueeze(-1)).squeeze(-1)
    m = mask[:, 1:].to(token_logps.dtype)
    return (token_logps * m).sum(-1), m.sum(-1)


def dpo_loss(policy_chosen: Any, policy_rejected: Any, ref_chosen: Any, ref_rejected: Any, beta: float) -> Any:
    """DPO's loss per pair, -log sigmoid(beta x (chosen's log-ratio - rejected's log-ratio))."""
    import torch.nn.functional as F

    return -F.logsigmoid(beta * ((policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)))


RESUME = "resume.pt"  # in OUT.partial: the state a stopped run goes on from


def run_key(encoded: Sequence[Any], model_path: str | Path, settings: DPOSettings) -> str:
    """What a resume state belongs to: the encoded pairs, the starting model and the settings that shape the
    run (``save_every`` does not). Another key means the state is stale and the run starts over."""
    h = hashlib.sha256()
    for pair in encoded:
        h.update(json.dumps(pair).encode())
    h.update(json.dumps({**asdict(settings), "save_every": None}, sort_keys=True).encode())
    for f in sorted(Path(model_path).glob("*")):  # each file's name, size and time: no read of a large model
        if f.is_file():
            st = f.stat()
            h.update(f"{f.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def save_state(path: Path, key: str, step: int, model: Any, optimizer: Any, scheduler: Any,
               ref: list[tuple[float, float]], seconds: float) -> None:
    import torch

    with atomic.path(path) as tmp:
        torch.save({"key": key, "step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "torch_rng": torch.get_rng_state(), "ref": ref,
                    "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
                    "seconds": seconds}, tmp)


def load_state(path: Path, key: str) -> dict[str, Any] | None:
    """The resume state at ``path`` when it belongs to this run (``run_key``), else None."""
    import torch

    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as e:  # a state that does not load is not worth losing the run over: start over
        print(f"dpo: ignoring {path}, it does not load ({type(e).__name__}: {e})", flush=True)
        return None
    if state.get("key") != key:
        print(f"dpo: ignoring {path}: it is of other pairs, another model or other settings", flush=True)
        return None
    return state


def keep_log_through(log: Path, step: int) -> None:
    """Drop the log's records of steps after ``step``: a resumed run writes them again."""
    if not log.exists():
        return
    lines = [line for line in log.read_text().splitlines(keepends=True) if json.loads(line).get("step", 0) <= step]
    atomic.write_text(log, "".join(lines))


def train(pairs: Sequence[dict[str, Any]], model_path: str | Path, out: str | Path, settings: DPOSettings,
          log: str | Path | None = None) -> Path:
    """Optimize ``model_path`` with DPO on ``pairs``; returns the transformers directory of the result.

    Trains in ``OUT.partial`` and renames it to ``OUT`` once the model is saved, so ``OUT`` exists only whole;
    goes on from ``OUT.partial``'s resume state when there is one of this run."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not pairs:
        raise ValueError("no preference pairs to train on")
    out = Path(out)
    partial = out.with_name(out.name + ".partial")
    torch.manual_seed(settings.seed)
    if not torch.cuda.is_available():
        torch.set_num_threads(machine.usable_cores())
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    model = AutoModelForCausalLM.from_pretrained(str(model_path), torch_dtype=torch.float32).to(device)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    encoded = [(encode(tokenizer, p["chosen"], settings.max_length), encode(tokenizer, p["rejected"],
                                                                            settings.max_length)) for p in pairs]
    log_path = Path(log) if log else partial / "dpo.log"
    key = run_key(encoded, model_path, settings)
    state = load_state(partial / RESUME, key)
    if state is None:
        shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)

    if state is not None:
        ref = state["ref"]
    else:
        model.eval()
        ref = []
        with torch.no_grad():  # the reference is the starting model: its log-probs once, not a second copy
            for start in range(0, len(encoded), settings.batch_pairs):
                chunk = encoded[start:start + settings.batch_pairs]
                lp, _ = sequence_logps(model, [c for c, _ in chunk] + [r for _, r in chunk], pad_id)
                ref += list(zip(lp[: len(chunk)].tolist(), lp[len(chunk):].tolist(), strict=True))

    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.0)
    steps_per_epoch = math.ceil(len(encoded) / settings.batch_pairs)
    total = steps_per_epoch * settings.epochs
    warm = max(0, settings.warmup_steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warm) if warm else 1.0)
    rng = random.Random(settings.seed)
    order = list(range(len(encoded)))
    done, elapsed = 0, 0.0  # optimizer steps and seconds a resume state already holds
    head = {"pairs": len(pairs), "steps": total, **asdict(settings)}
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        if state.get("cuda_rng") is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        done, elapsed = state["step"], state["seconds"]
        keep_log_through(log_path, done)
        head = {"resumed_after": done}
        print(f"dpo: resuming after step {done}/{total} from {partial / RESUME}", flush=True)
    step, started = 0, time.monotonic() - elapsed
    with open(log_path, "a" if state is not None else "w") as f:
        f.write(json.dumps(head) + "\n")
        for _ in range(settings.epochs):
            rng.shuffle(order)  # replayed for the epochs a resume skips, so every step sees its own batch
            for start in range(0, len(order), settings.batch_pairs):
                if step < done:
                    step += 1
                    continue
                idx = order[start:start + settings.batch_pairs]
                chosen = [encoded[i][0] for i in idx]
                rejected = [encoded[i][1] for i in idx]
                lp, n = sequence_logps(model, chosen + rejected, pad_id)
                pc, pr = lp[: len(idx)], lp[len(idx):]
                rc = torch.tensor([ref[i][0] for i in idx], device=lp.device)
                rr = torch.tensor([ref[i][1] for i in idx], device=lp.device)
                losses = dpo_loss(pc, pr, rc, rr, settings.beta)
                loss = losses.mean()
                if settings.sft_weight:
                    loss = loss + settings.sft_weight * (-(pc / n[: len(idx)].clamp(min=1))).mean()
                optimizer.zero_grad()
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                step += 1
                margin = settings.beta * ((pc - rc) - (pr - rr)).detach()
                record = {"step": step, "loss": round(loss.item(), 5), "dpo_loss": round(losses.mean().item(), 5),
                          "accuracy": round((margin > 0).float().mean().item(), 4),
                          "margin": round(margin.mean().item(), 5),
                          "chosen_logratio": round((pc - rc).mean().item(), 4),
                          "rejected_logratio": round((pr - rr).mean().item(), 4),
                          "grad_norm": round(float(grad_norm), 4), "seconds": round(time.monotonic() - started, 1)}
                f.write(json.dumps(record) + "\n")
                f.flush()
                if step == 1 or step % 10 == 0 or step == total:
                    print(f"dpo: step {step}/{total} loss {record['loss']:.4f} accuracy {record['accuracy']:.2f} "
                          f"margin {record['margin']:.3f}", flush=True)
                if settings.save_every and step % settings.save_every == 0 and step < total:
                    save_state(partial / RESUME, key, step, model, optimizer, scheduler, ref,
                               time.monotonic() - started)

    hf = partial / f"global_step_{step}" / "huggingface"
    model.save_pretrained(hf, safe_serialization=True)
    tokenizer.save_pretrained(hf)
    atomic.write_text(partial / TRACKER, f"{step}\n")
    (partial / RESUME).unlink(missing_ok=True)
    if out.exists():
        shutil.rmtree(out)
    os.replace(partial, out)
    return out / f"global_step_{step}" / "huggingface"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", required=True, help="JSON lines of {chosen, rejected} AgentTraj items")
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    defaults = DPOSettings()
    for name, value in asdict(defaults).items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = p.parse_args(argv)
    settings = DPOSettings(**{k: getattr(args, k) for k in asdict(defaults)})
    try:
        pairs = list(trajectories.read(args.pairs))
    except (OSError, ValueError) as e:
        p.error(str(e))
    model = train(pairs, args.model, args.out, settings)
    print(f"dpo: {len(pairs)} pairs -> {model}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
