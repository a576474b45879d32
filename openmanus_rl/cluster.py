"""Where a launcher's environment servers run: ``env_servers.backend`` of its config.

``local`` (the default): ``--replicas N`` child processes per environment on this machine, on loopback.
``ray``: ``--replicas N`` Ray actors per environment, placed over the cluster at
``env_servers.ray_address`` (or over a Ray instance started here for the run), health-checked and
restarted by Ray (:mod:`agentenv.ray_servers`); verl's own driver then joins that same cluster, so
its rollout workers reach the replicas' directory.

A multi-node run (``trainer.nnodes`` > 1, ``env_servers.ray_address`` or ``$RAY_ADDRESS`` set) always
gets the ``ray`` backend: verl puts agent-loop workers on every node, and servers on this machine's
loopback are out of their reach (:func:`server_placement` says so when it switches).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import DictConfig, OmegaConf

from openmanus_rl.verl_args import override_key

_ADDRESS = "ray_kwargs.ray_init.address"
_CPUS = "ray_kwargs.ray_init.num_cpus"
_GPUS = "ray_kwargs.ray_init.num_gpus"
_NNODES = "trainer.nnodes"
_WORKER_ENV = "ray_kwargs.ray_init.runtime_env.env_vars"

_said: set[str] = set()  # notes already printed (a launcher may ask for its placement more than once)


def _setting(args: Sequence[str], key: str) -> str | None:
    """The last value ``key`` (with or without hydra's ``+``) gets in a list of ``key=value``."""
    found = None
    for a in args:
        k, sep, v = a.partition("=")
        if sep and override_key(k) == key:
            found = v
    return found


def _nnodes(verl_args: Sequence[str]) -> int:
    value = _setting(verl_args, _NNODES)
    try:
        return int(float(value)) if value not in (None, "", "null") else 1
    except ValueError:
        return 1


def multi_node(placement: Mapping[str, Any], verl_args: Sequence[str] = ()) -> str | None:
    """Why the run spans (or may span) several nodes, or None for a run on this machine alone."""
    nnodes = _nnodes(verl_args)
    if nnodes > 1:
        return f"trainer.nnodes={nnodes}"
    if placement.get("ray_address"):
        return f"env_servers.ray_address={placement['ray_address']}"
    if os.environ.get("RAY_ADDRESS"):
        return f"RAY_ADDRESS={os.environ['RAY_ADDRESS']}"
    return None


def server_placement(cfg: DictConfig, n_servers: int, verl_args: Sequence[str] = ()) -> dict[str, Any]:
    """Keyword arguments of :func:`agentenv.launcher.env_servers` for the config's backend.

    A multi-node run (:func:`multi_node`) with the ``local`` backend is switched to ``ray``, with a note:
    its verl workers run on every node, where this machine's loopback servers cannot be reached. Its
    cluster is ``env_servers.ray_address``, else ``$RAY_ADDRESS``, else ``auto`` (the one ``ray start``
    started on this machine). A Ray instance started here (a single-machine run with the ``ray``
    backend) gets the logical CPUs and GPUs verl's preset asks for (``verl_args``: its
    ``ray_kwargs.ray_init``) plus one CPU per server replica."""
    placement = OmegaConf.to_container(cfg.get("env_servers") or OmegaConf.create({}))
    assert isinstance(placement, dict)
    backend = str(placement.get("backend") or "local")
    why = multi_node(placement, verl_args)
    if backend == "local" and why:
        note = (f"note: {why}: verl's workers may run on any node of a Ray cluster, out of reach of servers on "
                f"this machine's loopback (env_servers.backend=local); the environment servers run on Ray "
                f"instead (env_servers.backend=ray)")
        if note not in _said:
            _said.add(note)
            print(note, file=sys.stderr, flush=True)
        backend = "ray"
    if backend != "ray":
        return {"backend": backend}
    address = placement.get("ray_address") or os.environ.get("RAY_ADDRESS") or ("auto" if why else None)
    init: dict[str, Any] = {}
    cpus, gpus = _setting(verl_args, _CPUS), _setting(verl_args, _GPUS)
    if cpus not in (None, "null"):
        init["num_cpus"] = int(float(cpus)) + n_servers
    if gpus not in (None, "null"):
        init["num_gpus"] = int(float(gpus))
    return {"backend": "ray", "ray": {
        "address": address, "init_kwargs": {} if address else init,
        "health_interval": float(placement.get("health_interval", 2.0)),
        "max_restarts": int(placement.get("max_restarts", 10))}}


def _quoted(value: str) -> str:
    """``value`` as a quoted hydra override value (commas, spaces, brackets stay in the string)."""
    escaped = re.sub(r"(\\*)'", lambda m: m.group(1) * 2 + "\\'", value)
    escaped = re.sub(r"(\\+)$", lambda m: m.group(1) * 2, escaped)
    return f"'{escaped}'"


def join_cluster(cmd: Sequence[str], placement: Mapping[str, Any], worker_env: Mapping[str, str]) -> list[str]:
    """verl's command, made to join the cluster the servers run on (when they run on Ray).

    Workers of a cluster someone else started neither inherit the launcher's environment nor share its
    files, so the variables verl's workers need (``worker_env``) go into the job's Ray runtime
    environment, and the agent loop's settings with them: where ``worker_env`` names the settings file
    (``$OPENMANUS_AGENT_CONFIG``), its content goes too (``$OPENMANUS_AGENT_SETTINGS``, which the loop
    reads first), so no node needs the file."""
    if placement.get("backend") != "ray":
        return list(cmd)
    from openmanus_rl.agent_registration import CONFIG_VAR, SETTINGS_VAR, settings_vars

    env = dict(worker_env)
    if env.get(CONFIG_VAR) and SETTINGS_VAR not in env:
        env.update(settings_vars(env[CONFIG_VAR]))
    runtime_env = [f"+{_WORKER_ENV}.{k}={_quoted(str(v))}" for k, v in env.items()]
    address = _joined_address(placement)
    if address is None:  # no cluster to join: verl starts its own Ray, as its preset says
        return [*cmd, *runtime_env]
    keep = [a for a in cmd if override_key(a) not in (_ADDRESS, _CPUS, _GPUS)]
    # an existing cluster's resources are its own: ray.init refuses num_cpus/num_gpus when joining one
    return [*keep, f"+{_ADDRESS}={_quoted(address)}", f"{_CPUS}=null", f"+{_GPUS}=null", *runtime_env]


def _joined_address(placement: Mapping[str, Any]) -> str | None:
    """The cluster verl's driver joins: the one this process is connected to (its servers run there), else
    the configured address (every server was given with ``--server``, so none was started on Ray)."""
    if "ray" in sys.modules:
        import ray

        if ray.is_initialized():
            from agentenv.ray_servers import cluster_address

            return cluster_address()
    return (placement.get("ray") or {}).get("address")
