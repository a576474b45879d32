"""Policies the evaluator can score, named by a spec string.

=====================  ==========================================================================
``expert``, ``random`` the environment's scripted policies (``agentenv.policies``, via /policy_action)
``hf:PATH``            a local transformers checkpoint; concurrent episodes are batched together
``openai:URL[:MODEL]`` an OpenAI-compatible chat endpoint (vLLM, SGLang, ...); MODEL defaults to the
                       first one the endpoint lists; ``OPENAI_API_KEY`` is sent when set
``verl:CKPT``          a checkpoint of verl's trainer (root, ``global_step_N`` or its ``actor`` dir)
=====================  ==========================================================================

LLM policies see exactly the prompts training uses (:mod:`openmanus_rl.prompts`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from agentenv.policies import SCRIPTED, Policy, scripted_policy
from openmanus_rl.policies.chat import ChatPolicy, GenerationSettings

SCHEMES = ("hf", "openai", "verl")
__all__ = ["SCHEMES", "ChatPolicy", "GenerationSettings", "PolicySpec", "PolicySpecError", "build_policy",
           "parse_policy_spec"]


class PolicySpecError(ValueError):
    """A policy spec that names nothing usable."""


@dataclass(frozen=True)
class PolicySpec:
    kind: str  # expert | random | hf | openai | verl
    target: str | None = None  # checkpoint path or endpoint URL
    model: str | None = None  # openai: the model name, when given

    @property
    def label(self) -> str:
        """A short row name for result tables."""
        if self.kind in SCRIPTED:
            return self.kind
        if self.kind == "openai":
            return f"openai:{self.model or urlparse(self.target or '').netloc}"
        path = Path(self.target or "").resolve()
        if self.kind == "verl" and path.name == "actor":
            path = path.parent
        return f"{self.kind}:{path.name}"


_PORT_AND_PATH = re.compile(r"^\d+(/.*)?$")


def _split_url_and_model(rest: str) -> tuple[str, str | None]:
    """``http://h:8000/v1:Qwen/Qwen2.5-7B`` -> (URL, model); a trailing ``:PORT[/path]`` is the URL's."""
    head, sep, tail = rest.rpartition(":")
    if sep and tail and not _PORT_AND_PATH.match(tail):
        parsed = urlparse(head)
        if parsed.scheme in ("http", "https") and parsed.netloc:
            return head, tail
    return rest, None


def parse_policy_spec(spec: str) -> PolicySpec:
    spec = spec.strip()
    if spec in SCRIPTED:
        return PolicySpec(spec)
    scheme, sep, rest = spec.partition(":")
    if not sep or scheme not in SCHEMES:
        raise PolicySpecError(f"unknown policy {spec!r}; use one of: {', '.join(SCRIPTED)}, hf:PATH, "
                              "openai:BASE_URL[:MODEL], verl:CKPT")
    if not rest:
        raise PolicySpecError(f"policy {spec!r} names no {'URL' if scheme == 'openai' else 'path'}")
    if scheme == "openai":
        url, model = _split_url_and_model(rest)
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise PolicySpecError(f"openai policy needs an http(s) base URL, e.g. openai:http://127.0.0.1:8000/v1; "
                                  f"got {rest!r}")
        return PolicySpec("openai", url.rstrip("/"), model)
    return PolicySpec(scheme, rest)


def build_policy(spec: PolicySpec, settings: GenerationSettings, *, dtype: str = "auto",
                 device: str = "auto") -> Policy:
    """The policy a spec names, loaded (checkpoints are read here, so bad paths fail early)."""
    if spec.kind in SCRIPTED:
        return scripted_policy(spec.kind)
    if spec.kind == "openai":
        from openmanus_rl.policies.openai_api import OpenAIBackend

        assert spec.target is not None
        return ChatPolicy(spec.label, OpenAIBackend(spec.target, spec.model, settings), settings)
    from openmanus_rl.policies.hf import HFBackend, load_model

    assert spec.target is not None
    label = spec.label
    if spec.kind == "hf":
        if not Path(spec.target).is_dir():
            raise PolicySpecError(f"hf checkpoint {spec.target} is not a directory")
        model, tokenizer = load_model(spec.target, dtype, device)
    else:
        from openmanus_rl.policies.verl_ckpt import actor_dir, transformers_dir

        label = f"verl:{actor_dir(spec.target).parent.name}"  # the step, also when given the checkpoint root
        with transformers_dir(spec.target) as path:
            model, tokenizer = load_model(path, dtype, device)
    return ChatPolicy(label, HFBackend(model, tokenizer, settings), settings)
