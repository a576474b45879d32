"""Where a launcher's environment servers run: ``env_servers.backend`` of its config.

``local`` (the default): ``--replicas N`` child processes per environment on this machine.
``ray``: ``--replicas N`` Ray actors per environment, placed over the cluster at
``env_servers.ray_address`` (or over a Ray instance started here for the run), health-checked and
restarted by Ray (:mod:`agentenv.ray_servers`); verl's own driver then joins that same cluster, so
its rollout workers reach the replicas' directory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import DictConfig, OmegaConf

_ADDRESS = "ray_kwargs.ray_init.address"
_CPUS = "ray_kwargs.ray_init.num_cpus"
_GPUS = "ray_kwargs.ray_init.num_gpus"


def _setting(args: Sequence[str], key: str) -> str | None:
    """The last value ``key`` (with or without hydra's ``+``) gets in a list of ``key=value``."""
    found = None
    for a in args:
        k, sep, v = a.partition("=")
        if sep and k.lstrip("+~") == key:
            found = v
    return found


def server_placement(cfg: DictConfig, n_servers: int, verl_args: Sequence[str] = ()) -> dict[str, Any]:
    """Keyword arguments of :func:`agentenv.launcher.env_servers` for the config's backend.

    A Ray instance started here gets the logical CPUs and GPUs verl's preset asks for (``verl_args``:
    its ``ray_kwargs.ray_init``) plus one CPU per server replica."""
    placement = OmegaConf.to_container(cfg.get("env_servers") or OmegaConf.create({}))
    assert isinstance(placement, dict)
    backend = str(placement.get("backend") or "local")
    if backend != "ray":
        return {"backend": backend}
    init: dict[str, Any] = {}
    cpus, gpus = _setting(verl_args, _CPUS), _setting(verl_args, _GPUS)
    if cpus not in (None, "null"):
        init["num_cpus"] = int(float(cpus)) + n_servers
    if gpus not in (None, "null"):
        init["num_gpus"] = int(float(gpus))
    return {"backend": "ray", "ray": {
        "address": placement.get("ray_address"), "init_kwargs": init,
        "health_interval": float(placement.get("health_interval", 2.0)),
        "max_restarts": int(placement.get("max_restarts", 10))}}


def join_cluster(cmd: Sequence[str], placement: Mapping[str, Any], worker_env: Mapping[str, str]) -> list[str]:
    """verl's command, made to join the cluster the servers run on (when they run on Ray).

    Workers of a cluster someone else started do not inherit the launcher's environment, so the
    variables verl's workers need (``worker_env``, e.g. where the agent loop's settings are) go into
    the job's Ray runtime environment."""
    if placement.get("backend") != "ray":
        return list(cmd)
    from agentenv.ray_servers import cluster_address

    keep = [a for a in cmd if a.partition("=")[0].lstrip("+~") not in (_ADDRESS, _CPUS, _GPUS)]
    # an existing cluster's resources are its own: ray.init refuses num_cpus/num_gpus when joining one
    return [*keep, f"+{_ADDRESS}={cluster_address()}", f"{_CPUS}=null", f"+{_GPUS}=null",
            *(f"+ray_kwargs.ray_init.runtime_env.env_vars.{k}={v}" for k, v in worker_env.items())]
